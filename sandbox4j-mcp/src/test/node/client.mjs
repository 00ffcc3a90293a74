// Drives sandbox4j's MCP server with the official MCP TypeScript SDK, for McpTypeScriptClientTest.
//
//   node client.mjs <node_modules> stdio <java> <classpath> <main class> <state root> <files root>
//   node client.mjs <node_modules> http <endpoint url> <token>
//
// Prints one JSON object on stdout: what each check saw, for the Java test to assert. Never
// decides pass or fail itself, so a failure shows what the server really did.
import { createRequire } from 'node:module';
import path from 'node:path';

const [modules, mode, ...rest] = process.argv.slice(2);
const require = createRequire(path.join(modules, 'noop.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const TICKS = '../ticks-' + process.pid;
const report = { clientErrors: [] };
let closing = false;

function textOf(result) {
  return result.content.map((c) => c.text).join('');
}

async function connect(transport) {
  const client = new Client({ name: 'sandbox4j-ts-test', version: '1.0.0' });
  // A response to a request the client no longer waits for arrives here ("unknown message ID").
  client.onerror = (error) => closing || report.clientErrors.push(String(error));
  await client.connect(transport);
  return client;
}

function runPython(client, code, options = {}) {
  return client.callTool({ name: 'execute_code', arguments: { code } }, undefined, options);
}

async function progressCheck(client) {
  const messages = [];
  const program = 'import time\nfor i in range(5):\n    print("line", i, flush=True)\n    time.sleep(0.3)\n';
  const result = await runPython(client, program, {
    onprogress: (progress) => messages.push(progress.message ?? null),
    resetTimeoutOnProgress: true,
  });
  return { messages, text: textOf(result), isError: result.isError ?? false };
}

async function cancellationCheck(client) {
  const controller = new AbortController();
  const program = 'import time\nwhile True:\n    open("' + TICKS + '", "a").write("x")\n    time.sleep(0.1)\n';
  const running = runPython(client, program, { signal: controller.signal });
  // Cancelled once the program has ticked for a while.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const cancelledAt = Date.now();
  controller.abort('the test cancels');
  let outcome;
  try {
    await running;
    outcome = 'answered';
  } catch (error) {
    outcome = 'rejected: ' + String(error);
  }
  // The program must have stopped within 2 s of the cancellation: the file then stops growing.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const measure = 'import os, time\na = os.path.getsize("' + TICKS + '")\ntime.sleep(1)\n'
      + 'b = os.path.getsize("' + TICKS + '")\nprint(a, b)\n';
  const measured = await runPython(client, measure);
  // Time for any late response to the cancelled request to show up as a client error.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { outcome, measured: textOf(measured), measuredAfterMs: Date.now() - cancelledAt };
}

async function fileCheck(client) {
  const name = 'é日本.txt';
  const written = await client.callTool({ name: 'write_file', arguments: { name, content: 'grüße' } });
  const read = await client.callTool({ name: 'read_file', arguments: { name } });
  const listed = await client.callTool({ name: 'list_files', arguments: {} });
  return {
    written: { text: textOf(written), isError: written.isError ?? false },
    read: { text: textOf(read), isError: read.isError ?? false },
    listed: textOf(listed),
  };
}

async function raw(url, init) {
  const response = await fetch(url, init);
  return { status: response.status, type: response.headers.get('content-type'),
    authenticate: response.headers.get('www-authenticate'), body: await response.text() };
}

async function httpChecks(endpoint, token) {
  const origin = new URL(endpoint).origin;
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const post = (headers, body = initialize) => raw(endpoint, { method: 'POST', body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } });
  const good = { authorization: 'Bearer ' + token };
  return {
    badToken: await post({ authorization: 'Bearer not-the-token' }),
    noToken: await post({}),
    badProtocolVersion: await post({ ...good, 'mcp-protocol-version': '1999-01-01' }),
    unknownSession: await post({ ...good, 'mcp-session-id': 'no-such-session' },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })),
    malformed: await post(good, '{not json'),
    oauthProtectedResource: await raw(origin + '/.well-known/oauth-protected-resource'),
    oauthProtectedResourceMcp: await raw(origin + '/.well-known/oauth-protected-resource/mcp'),
    oauthAuthorizationServer: await raw(origin + '/.well-known/oauth-authorization-server'),
  };
}

async function main() {
  let client;
  if (mode === 'stdio') {
    const [java, classPath, mainClass, stateRoot, filesRoot] = rest;
    // The environment a desktop host gives: no LANG, the C locale.
    client = await connect(new StdioClientTransport({ command: java,
      args: ['-cp', classPath, mainClass, stateRoot, filesRoot],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LC_ALL: 'C' }, stderr: 'inherit' }));
  } else {
    const [endpoint, token] = rest;
    report.http = await httpChecks(endpoint, token);
    client = await connect(new StreamableHTTPClientTransport(new URL(endpoint),
      { requestInit: { headers: { authorization: 'Bearer ' + token } } }));
  }
  try {
    report.tools = (await client.listTools()).tools.map((tool) => tool.name);
    report.progress = await progressCheck(client);
    report.cancellation = await cancellationCheck(client);
    if (report.tools.includes('write_file')) {
      report.files = await fileCheck(client);
    }
  } finally {
    // Closing aborts the transport's own streams (AbortError): only what came before counts.
    closing = true;
    await client.close();
  }
}

main().then(() => {
  process.stdout.write(JSON.stringify(report) + '\n');
}, (error) => {
  report.failure = String(error && error.stack || error);
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exitCode = 1;
});
