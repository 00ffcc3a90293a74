/*
 * s4j-agent: the sandbox4j guest agent (protocol version 1, see ../../../PROTOCOL.md).
 *
 * One single-threaded poll loop serves one framed byte stream: a virtio-serial port in a microVM, or
 * stdin/stdout (--stdio) as a resident process in a namespace or container. Nothing the host sends is
 * trusted: every length is checked before use, a malformed frame gets a typed ERROR.
 * With --egress-virtio-name/--egress-port, one unprivileged child process serves the egress tunnel on a second
 * port (guest TCP connections to the host's proxy, PROTOCOL.md "The egress tunnel"); the agent restarts it.
 * A lease the host armed (SET_LEASE) and stopped renewing powers the guest off, whatever became of the host.
 *
 * Build: gcc -static -O2 -Wall -Wextra -o s4j-agent s4j-agent.c   (glibc static is enough; see Makefile)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/random.h>
#include <linux/securebits.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_NAME "s4j-agent 1.3"
#define PROTO_VERSION 1
#define MAGIC 0x5334
#define HEADER_LEN 8 /* magic, version, type, id: what frame_length counts besides the payload */
#define MAX_PAYLOAD (1024 * 1024)
#define MAX_PATH_LEN 4096
#define MAX_ARGS 4096
#define MAX_EXECS 64
#define MAX_WRITES 16
#define OUT_CHUNK (256 * 1024)
#define SPLICE_FRAMES_PER_WAKE 4
#define READ_CHUNK (256 * 1024)
#define STDIN_DATA_MAX (64 * 1024)
#define STDIN_WINDOW (256 * 1024)
#define WINDOW_MIN (4 * 1024)
#define WINDOW_MAX (16 * 1024 * 1024)
#define WINDOW_DEFAULT (256 * 1024)
#define NONCE_MIN 16
#define NONCE_MAX 64
#define PING_MAX 256
#define RESEED_MAX 4096
#define LEASE_MAX_SECONDS (366u * 24 * 3600)
#define LEASE_POLL_MAX_MS 60000 /* a far lease is looked at again within a minute: poll takes an int */
#define MESSAGE_MAX 256
#define LIST_BATCH (60 * 1024)
#define TREE_DEPTH_MAX 256
#define RECONNECT_POLL_MS 50
/* --marker-kill: every exec's environment starts with S4J_EXEC=<agent id>-<exec number>; a kill scans /proc */
#define MARKER_NAME "S4J_EXEC"
#define MARKER_MAX 64
#define ENVIRON_CHUNK (64 * 1024)
#define ENVIRON_SCAN_MAX (8 * 1024 * 1024) /* more than execve lets an environment be (a quarter of the stack limit) */
#define PF_KTHREAD_FLAG 0x00200000UL      /* include/linux/sched.h: the task is a kernel thread */
#define KILL_ROUNDS 50                     /* scans before survivors are reported (a process may fork mid-scan) */
#define KILL_BOUND_MS 3000
#define KILL_PAUSE_MAX_US 50000
/* --exec-namespaces: the per-exec init forwards the host's signals, carried on this one (value: signo | scope << 8) */
#define CARRIER_SIGNAL SIGRTMAX
#define MAX_EXEC_TMPFS 8
/* fewer wake-ups per byte of bulk output (a 256 MiB stdout: 1.8x the bare command with 256 KiB, 1.1x with 1 MiB).
   64 execs at once hold 80 MiB of pipes, past the default pipe-user-pages-soft (64 MiB), beyond which the kernel
   gives this user's new pipes 2 pages: slower, never failing */
#define OUT_PIPE_SIZE (1024 * 1024)
#define ERR_PIPE_SIZE (256 * 1024)
#define PIPE_DEFAULT_SIZE (64 * 1024)
#define HOST_PIPE_SIZE (1024 * 1024) /* the unprivileged maximum (fs.pipe-max-size) by default */
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* the egress tunnel: its own framing on its own port (PROTOCOL.md, "The egress tunnel") */
#define EGRESS_VERSION 1
#define EGRESS_MAGIC 0x53344547u /* "S4EG" */
#define EGRESS_HEADER_LEN 9      /* u32 stream, u8 type, u32 length */
#define EGRESS_HELLO_LEN 10      /* u32 magic, u16 version, u32 nonce */
#define EGRESS_DATA_MAX (64 * 1024)
#define EGRESS_WINDOW (256 * 1024)
#define EGRESS_MAX_STREAMS 64
#define EGRESS_OUT_MAX (4 * (EGRESS_HEADER_LEN + EGRESS_DATA_MAX))
#define EGRESS_BACKLOG 64
#define EGRESS_ID 65534          /* nobody: the tunnel process's uid and gid */
#define EGRESS_PORT_TRIES 20     /* at boot, a port may appear shortly after the agent's own */
#define EGRESS_RESTART_MS 1000
#define EGRESS_EXIT_PORT_CLOSED 3 /* the child's exit when its socket port ended: reconnect at once */
#define EGRESS_DEFAULT_LISTEN "127.0.0.1:3128"

enum type {
    T_HELLO = 0x01, T_PING = 0x02, T_RESEED = 0x03, T_SHUTDOWN = 0x04, T_SET_CLOCK = 0x05, T_SET_LEASE = 0x06,
    T_EXEC = 0x10, T_STDIN = 0x11, T_STDIN_CLOSE = 0x12, T_SIGNAL = 0x13, T_KILL = 0x14, T_OUTPUT_ACK = 0x15,
    T_LSTAT = 0x20, T_READ = 0x21, T_WRITE_OPEN = 0x22, T_WRITE_DATA = 0x23, T_WRITE_COMMIT = 0x24,
    T_WRITE_ABORT = 0x25, T_LIST = 0x26, T_MKDIR = 0x27, T_UNLINK = 0x28, T_RMDIR = 0x29, T_REMOVE_TREE = 0x2A,
    T_HELLO_OK = 0x81, T_PONG = 0x82, T_STARTED = 0x90, T_OUT = 0x91, T_EXIT = 0x92, T_STDIN_ACK = 0x93,
    T_STAT = 0xA0, T_DATA = 0xA1, T_ENTRIES = 0xA2, T_DONE = 0xA3, T_ERROR = 0xFF
};

enum error_code {
    E_PROTOCOL = 1, E_BAD_REQUEST = 2, E_VERSION = 3, E_NOT_READY = 4, E_UNKNOWN_TYPE = 5, E_UNKNOWN_ID = 6,
    E_ID_IN_USE = 7, E_LIMIT = 8, E_FLOW = 9,
    E_NOT_FOUND = 20, E_NOT_DIRECTORY = 21, E_IS_DIRECTORY = 22, E_SYMLINK = 23, E_EXISTS = 24,
    E_NOT_EMPTY = 25, E_TOO_LARGE = 26, E_NOT_REGULAR = 27, E_PERMISSION = 28, E_NO_SPACE = 29, E_IO = 30,
    E_CWD_NOT_FOUND = 40, E_CWD_NOT_DIRECTORY = 41, E_LAUNCH = 42
};

enum egress_type { ET_HELLO = 1, ET_OPEN = 2, ET_DATA = 3, ET_EOF = 4, ET_CLOSE = 5, ET_CREDIT = 6 };

enum launch { LAUNCH_RAN = 0, LAUNCH_NOT_FOUND = 1, LAUNCH_NOT_EXECUTABLE = 2 };
enum stage { STAGE_CHDIR = 1, STAGE_EXEC = 2, STAGE_CREDENTIALS = 3, STAGE_NAMESPACE = 4 };
enum exec_flag { EXEC_STDIN = 1, EXEC_AS_AGENT = 2, EXEC_END_TREE = 4 };
enum hello_flag {
    HELLO_PID1 = 1, HELLO_CGROUP_KILL = 2, HELLO_LEASE = 4, HELLO_MARKER_KILL = 8, HELLO_EXEC_NAMESPACES = 16,
    HELLO_EXEC_USER = 32, HELLO_TREE_REPORT = 64
};
/* EXIT's last field: what became of the exec's tree */
enum tree { TREE_UNKNOWN = 0, TREE_ENDED = 1, TREE_SURVIVED = 2 };

/* ---------- state ---------- */

struct exec {
    int used;
    uint32_t id;
    pid_t pid;
    int out[3];          /* [1] stdout, [2] stderr read ends; -1 when closed */
    uint32_t credit[3];  /* bytes the host still accepts per stream */
    int in;              /* stdin write end, -1 when none */
    uint8_t *in_buf;     /* pending stdin bytes, at most STDIN_WINDOW */
    size_t in_len;
    int in_close_pending;
    int exited;
    int killed;          /* the host asked for KILL: output it has not yet got is dropped */
    int status;
    char cgroup[320];    /* empty when none */
    int cgroup_fd;       /* open while the exec lives: it goes back to the spares with it */
    int end_tree;        /* EXEC_END_TREE: the tree is ended when the leader exits */
    int tree_done;       /* the tree was ended (or the kill gave up): tree says how */
    int tree;            /* enum tree, reported in EXIT */
    int ns_init;         /* --exec-namespaces: pid is the exec's init, PID 1 of its own namespace */
    int exit_fd;         /* the init's report of the command's wait status; -1 when none */
    char marker[MARKER_MAX]; /* --marker-kill: the exec's S4J_EXEC=... entry */
};

struct file_write {
    int used;
    uint32_t id;
    int dir_fd;
    int fd;
    int replace;
    uint64_t size;
    char name[256];
    char temp[64];
};

/* One TCP connection of a guest program, multiplexed over the egress port. */
struct egress_stream {
    int used;
    uint32_t id;
    int fd;               /* the client's socket; -1 once closed */
    uint32_t send_credit; /* bytes the host still accepts from the client */
    uint32_t recv_avail;  /* bytes the host may still send before it is granted more */
    uint32_t grant;       /* bytes delivered to the client, not yet granted back */
    uint8_t *buf;         /* the host's bytes the client has not taken: at most EGRESS_WINDOW */
    size_t buf_off, buf_len;
    int open_sent, client_eof, eof_sent, host_eof, shut_wr;
    int close_pending;    /* aborted here: CLOSE to send, then the slot is free */
};

static int in_fd = -1, out_fd = -1;
static int stdio_mode;
static int no_cgroup;         /* --no-cgroup: kill by process group only */
static int marker_kill;       /* --marker-kill: a kill also scans /proc for the exec's marker */
static int exec_namespaces;   /* --exec-namespaces: each exec gets an init in new PID and mount namespaces */
static const char *exec_tmpfs[MAX_EXEC_TMPFS]; /* --exec-tmpfs: empty tmpfs mounts each exec gets */
static int exec_tmpfs_count;
static int exec_tmpfs_sized;
/* --exec-tmpfs-size: each of those mounts' size=; as a fresh bwrap's --size bounds its /tmp, so no exec can fill
   memory through them. Empty = the kernel's default (half of RAM). */
static char exec_tmpfs_options[64] = "mode=1777";
#define EXEC_TMPFS_SIZE_MAX (1ULL << 40)
static long exec_uid = -1, exec_gid = -1; /* --exec-user: commands get a user namespace of their own as this */
static char marker_prefix[32];  /* S4J_EXEC=<agent id>- : every exec's marker starts with it */
static unsigned long marker_counter;
static int pid1;
static int init_mode;         /* --init: the microVM's PID 1, which sets the guest's system up */
static int session;           /* a HELLO was answered */
static int splice_to_host;    /* the host's end is a pipe: output moves to it by splice(2) */
static int port_down;         /* virtio port: host side closed, retry later */
static int port_async;        /* SIGIO armed on the port: the kernel signals the host's return */
static long long port_down_since;
static int desync;            /* after a framing error: skip bytes until a HELLO header */
static long long lease_deadline = -1; /* monotonic ms at which an unrenewed lease powers off; -1: none armed */
static pid_t agent_pid;       /* the lease is the agent's alone: a forked child's copy of it means nothing */
static char cgroup_base[256]; /* where per-exec cgroups go; empty when unavailable */
static long run_uid = -1, run_gid = -1; /* --user: commands and file primitives act as this user */
static long pids_max = -1;    /* --pids-max: the most tasks every exec together may run */
static unsigned long cgroup_counter;
/* Empty per-exec cgroups kept for the next execs: making and removing one costs ~1-3 ms on TCG. */
#define SPARE_CGROUPS 4
#define PREMADE_CGROUPS 2
static struct spare_cgroup { char path[320]; int fd; } spare_cgroups[SPARE_CGROUPS];
static int spare_cgroup_count;
/* Cgroups whose leftovers still lived when their exec ended: removed as soon as they are empty. */
#define DRAINING_CGROUPS 16
static char draining_cgroups[DRAINING_CGROUPS][320];
static struct exec execs[MAX_EXECS];
static struct file_write writes[MAX_WRITES];
static uint8_t in_buf[4 + HEADER_LEN + MAX_PAYLOAD + OUT_CHUNK];
static size_t in_len;
static uint8_t reply[MAX_PAYLOAD];
static size_t reply_len;
static int reply_overflow;
static const char *egress_virtio_name, *egress_port_path, *egress_listen = EGRESS_DEFAULT_LISTEN;
static int egress_listen_fd = -1;
static pid_t egress_pid = -1;       /* the running tunnel process */
static long long egress_due = -1;   /* when to start it (monotonic ms); -1: not to be started */
static int egress_started, egress_port_tries, egress_outage_logged;

static void logf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("s4j-agent: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static long long monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------- writing frames ---------- */

static void end_session(void);
static void mark_port_down(void);
static void egress_exited(int status);
static void lease_check(void);

static int write_all(int fd, const void *data, size_t len) {
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                poll(&pfd, 1, 1000);
                lease_check(); /* a host that stopped reading renews nothing either */
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

static void put_be(uint8_t *p, uint64_t v, int width) {
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (uint8_t) v;
        v >>= 8;
    }
}

/* The host stopped reading: over stdio the agent's life ends with it, a port is tried again later. */
static void host_write_failed(void) {
    logf_("write to host failed: %s", strerror(errno));
    if (stdio_mode) exit(1);
    mark_port_down();
}

/* Writes a frame's prefix and the first len bytes of its payload; the caller sends the trailing bytes that
   complete it right after. 0 sent, -1 the port is down. */
static int send_head(uint8_t type, uint32_t id, const uint8_t *payload, size_t len, size_t trailing) {
    if (port_down || out_fd < 0) return -1;
    uint8_t header[4 + HEADER_LEN];
    put_be(header, HEADER_LEN + len + trailing, 4);
    put_be(header + 4, MAGIC, 2);
    header[6] = PROTO_VERSION;
    header[7] = type;
    put_be(header + 8, id, 4);
    struct iovec iov[2] = {{header, sizeof header}, {(void *) payload, len}};
    size_t total = sizeof header + len, done = 0;
    while (done < total) {
        ssize_t n = writev(out_fd, iov, 2);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = out_fd, .events = POLLOUT};
                poll(&pfd, 1, 1000);
                lease_check();
                continue;
            }
            host_write_failed();
            return -1;
        }
        done += (size_t) n;
        for (int i = 0; i < 2 && n > 0; i++) {
            size_t take = (size_t) n < iov[i].iov_len ? (size_t) n : iov[i].iov_len;
            iov[i].iov_base = (uint8_t *) iov[i].iov_base + take;
            iov[i].iov_len -= take;
            n -= (ssize_t) take;
        }
    }
    return 0;
}

static void send_frame(uint8_t type, uint32_t id, const uint8_t *payload, size_t len) {
    send_head(type, id, payload, len, 0);
}

static void r_reset(void) { reply_len = 0; reply_overflow = 0; }

static void r_raw(const void *p, size_t n) {
    if (reply_len + n > sizeof reply) { reply_overflow = 1; return; }
    memcpy(reply + reply_len, p, n);
    reply_len += n;
}

static void r_int(uint64_t v, int width) {
    uint8_t b[8];
    put_be(b, v, width);
    r_raw(b, (size_t) width);
}

static void r_u8(uint8_t v) { r_int(v, 1); }
static void r_u16(uint16_t v) { r_int(v, 2); }
static void r_u32(uint32_t v) { r_int(v, 4); }
static void r_u64(uint64_t v) { r_int(v, 8); }
static void r_bytes(const void *p, size_t n) { r_u32((uint32_t) n); r_raw(p, n); }
static void r_send(uint8_t type, uint32_t id) { send_frame(type, id, reply, reply_len); }

static void send_error(uint32_t id, uint16_t code, int err, const char *fmt, ...) {
    char message[MESSAGE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    r_reset();
    r_u16(code);
    r_u32((uint32_t) err);
    r_bytes(message, strlen(message));
    r_send(T_ERROR, id);
}

static uint16_t errno_code(int err) {
    switch (err) {
    case ENOENT: return E_NOT_FOUND;
    case ENOTDIR: return E_NOT_DIRECTORY;
    case EISDIR: return E_IS_DIRECTORY;
    case ELOOP: return E_SYMLINK;
    case EEXIST: return E_EXISTS;
    case ENOTEMPTY: return E_NOT_EMPTY;
    case EACCES: case EPERM: case EROFS: return E_PERMISSION;
    case ENOSPC: case EDQUOT: return E_NO_SPACE;
    case EFBIG: return E_TOO_LARGE;
    default: return E_IO;
    }
}

static void send_errno(uint32_t id, int err, const char *what) {
    send_error(id, errno_code(err), err, "%s: %s", what, strerror(err));
}

static void send_done(uint32_t id, uint64_t value, uint8_t flag) {
    r_reset();
    r_u64(value);
    r_u8(flag);
    r_send(T_DONE, id);
}

/* ---------- reading payload fields ---------- */

struct rd {
    const uint8_t *p;
    size_t left;
    int bad;
};

static uint64_t g_int(struct rd *r, int width) {
    if (r->bad || r->left < (size_t) width) { r->bad = 1; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 8) | r->p[i];
    r->p += width;
    r->left -= (size_t) width;
    return v;
}

static uint8_t g_u8(struct rd *r) { return (uint8_t) g_int(r, 1); }
static uint16_t g_u16(struct rd *r) { return (uint16_t) g_int(r, 2); }
static uint32_t g_u32(struct rd *r) { return (uint32_t) g_int(r, 4); }
static uint64_t g_u64(struct rd *r) { return g_int(r, 8); }

/* A length-prefixed field of at most max bytes; points into the frame. */
static const uint8_t *g_bytes(struct rd *r, size_t max, size_t *len) {
    uint32_t n = g_u32(r);
    if (r->bad || n > max || n > r->left) { r->bad = 1; *len = 0; return NULL; }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    *len = n;
    return p;
}

/* A field that becomes a C string: no NUL inside, at most max bytes. Caller frees. */
static char *g_string(struct rd *r, size_t max) {
    size_t n;
    const uint8_t *p = g_bytes(r, max, &n);
    if (!p || memchr(p, 0, n)) { r->bad = 1; return NULL; }
    char *s = malloc(n + 1);
    if (!s) { r->bad = 1; return NULL; }
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static void free_strings(char **v) {
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

/* list<bytes> as a NULL-terminated array of C strings. */
static char **g_string_list(struct rd *r, uint32_t min, uint32_t max) {
    uint32_t count = g_u32(r);
    if (r->bad || count < min || count > max || count > r->left / 4) { r->bad = 1; return NULL; }
    char **v = calloc(count + 1, sizeof *v);
    if (!v) { r->bad = 1; return NULL; }
    for (uint32_t i = 0; i < count; i++) {
        v[i] = g_string(r, MAX_PAYLOAD);
        if (!v[i]) { free_strings(v); return NULL; }
    }
    return v;
}

/* ---------- paths: every parent opened with O_NOFOLLOW ---------- */

struct resolved {
    int dir_fd;      /* the parent directory (O_PATH) */
    char name[256];  /* the last component, "." for "/" */
};

/* Resolves path to its parent and last name without following any link; sends the error itself. */
static int resolve(uint32_t id, struct rd *r, struct resolved *out) {
    size_t n;
    const uint8_t *p = g_bytes(r, MAX_PATH_LEN, &n);
    if (!p || n == 0 || p[0] != '/' || memchr(p, 0, n)) {
        send_error(id, E_BAD_REQUEST, 0, "path must be absolute, at most %d bytes, without NUL", MAX_PATH_LEN);
        return -1;
    }
    char path[MAX_PATH_LEN + 1];
    memcpy(path, p, n);
    path[n] = 0;
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) { send_errno(id, errno, "open /"); return -1; }
    char *save = NULL, *comp = strtok_r(path, "/", &save);
    strcpy(out->name, ".");
    while (comp) {
        char *next = strtok_r(NULL, "/", &save);
        if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0 || strlen(comp) > 255) {
            close(fd);
            send_error(id, E_BAD_REQUEST, 0, "path component '.', '..' or longer than 255 bytes");
            return -1;
        }
        if (!next) {
            strcpy(out->name, comp);
            break;
        }
        int child = openat(fd, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
        if (child < 0) {
            int err = errno;
            struct stat st;
            if ((err == ENOTDIR || err == ELOOP) && fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0
                && S_ISLNK(st.st_mode)) {
                send_error(id, E_SYMLINK, ELOOP, "a parent component is a symbolic link: %s", comp);
            } else {
                send_errno(id, err, comp);
            }
            close(fd);
            return -1;
        }
        close(fd);
        fd = child;
        comp = next;
    }
    out->dir_fd = fd;
    return 0;
}

static uint8_t kind_of(mode_t mode) {
    if (S_ISREG(mode)) return 1;
    if (S_ISDIR(mode)) return 2;
    if (S_ISLNK(mode)) return 3;
    return 4;
}

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t) st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* ---------- file primitives ---------- */

static void do_lstat(uint32_t id, struct rd *r) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    struct stat st;
    if (fstatat(res.dir_fd, res.name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        send_errno(id, errno, "lstat");
        close(res.dir_fd);
        return;
    }
    char target[MAX_PATH_LEN];
    ssize_t tn = 0;
    if (S_ISLNK(st.st_mode)) {
        tn = readlinkat(res.dir_fd, res.name, target, sizeof target);
        if (tn < 0) tn = 0;
    }
    close(res.dir_fd);
    r_reset();
    r_u8(kind_of(st.st_mode));
    r_u32(st.st_mode & 07777);
    r_u64((uint64_t) st.st_size);
    r_u64((uint64_t) mtime_ns(&st));
    r_u32(st.st_uid);
    r_u32(st.st_gid);
    r_bytes(target, (size_t) tn);
    r_send(T_STAT, id);
}

static void do_read(uint32_t id, struct rd *r) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    uint64_t max = g_u64(r);
    if (r->bad) { close(res.dir_fd); send_error(id, E_BAD_REQUEST, 0, "READ needs path and max"); return; }
    struct stat st;
    /* stat first: opening a device or fifo can have effects of its own */
    if (fstatat(res.dir_fd, res.name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        send_errno(id, errno, "read");
        close(res.dir_fd);
        return;
    }
    if (S_ISLNK(st.st_mode)) { close(res.dir_fd); send_error(id, E_SYMLINK, ELOOP, "is a symbolic link"); return; }
    if (S_ISDIR(st.st_mode)) { close(res.dir_fd); send_error(id, E_IS_DIRECTORY, EISDIR, "is a directory"); return; }
    if (!S_ISREG(st.st_mode)) { close(res.dir_fd); send_error(id, E_NOT_REGULAR, 0, "not a regular file"); return; }
    int fd = openat(res.dir_fd, res.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(res.dir_fd);
    if (fd < 0) { send_errno(id, errno, "open"); return; }
    struct stat now;
    if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
        close(fd);
        send_error(id, E_NOT_REGULAR, 0, "file changed while opening");
        return;
    }
    if ((uint64_t) now.st_size > max) {
        close(fd);
        send_error(id, E_TOO_LARGE, 0, "file is %lld bytes, more than %llu", (long long) now.st_size,
                   (unsigned long long) max);
        return;
    }
    static uint8_t chunk[READ_CHUNK];
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { send_errno(id, errno, "read"); close(fd); return; }
        if (n == 0) break;
        total += (uint64_t) n;
        if (total > max) {
            close(fd);
            send_error(id, E_TOO_LARGE, 0, "file grew past %llu bytes", (unsigned long long) max);
            return;
        }
        r_reset();
        r_bytes(chunk, (size_t) n);
        r_send(T_DATA, id);
    }
    close(fd);
    send_done(id, total, 0);
}

static struct file_write *find_write(uint32_t id) {
    for (int i = 0; i < MAX_WRITES; i++)
        if (writes[i].used && writes[i].id == id) return &writes[i];
    return NULL;
}

static void abort_write(struct file_write *w) {
    if (w->fd >= 0) close(w->fd);
    unlinkat(w->dir_fd, w->temp, 0);
    close(w->dir_fd);
    memset(w, 0, sizeof *w);
}

static void do_write_open(uint32_t id, struct rd *r) {
    if (find_write(id)) { send_error(id, E_ID_IN_USE, 0, "write %u is open", id); return; }
    struct file_write *w = NULL;
    for (int i = 0; i < MAX_WRITES && !w; i++)
        if (!writes[i].used) w = &writes[i];
    if (!w) { send_error(id, E_LIMIT, 0, "more than %d open writes", MAX_WRITES); return; }
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    uint32_t mode = g_u32(r), flags = g_u32(r);
    if (r->bad || strcmp(res.name, ".") == 0) {
        close(res.dir_fd);
        send_error(id, E_BAD_REQUEST, 0, "WRITE_OPEN needs a file path, mode and flags");
        return;
    }
    struct stat st;
    if (fstatat(res.dir_fd, res.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) { close(res.dir_fd); send_error(id, E_IS_DIRECTORY, EISDIR, "is a directory"); return; }
        if (!(flags & 1)) { close(res.dir_fd); send_error(id, E_EXISTS, EEXIST, "exists"); return; }
    }
    memset(w, 0, sizeof *w);
    w->id = id;
    w->dir_fd = res.dir_fd;
    w->replace = flags & 1;
    strcpy(w->name, res.name);
    snprintf(w->temp, sizeof w->temp, ".s4j-%u-%ld.tmp", id, (long) getpid());
    w->fd = openat(w->dir_fd, w->temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        int err = errno;
        close(w->dir_fd);
        memset(w, 0, sizeof *w);
        send_errno(id, err, "create");
        return;
    }
    w->used = 1;
    if (fchmod(w->fd, mode & 07777) < 0) {
        int err = errno;
        abort_write(w);
        send_errno(id, err, "chmod");
        return;
    }
    send_done(id, 0, 0);
}

static void do_write_data(uint32_t id, struct rd *r) {
    struct file_write *w = find_write(id);
    if (!w) { send_error(id, E_UNKNOWN_ID, 0, "no open write %u", id); return; }
    size_t n;
    const uint8_t *p = g_bytes(r, MAX_PAYLOAD, &n);
    if (!p) { abort_write(w); send_error(id, E_BAD_REQUEST, 0, "WRITE_DATA needs data"); return; }
    if (write_all(w->fd, p, n) < 0) {
        int err = errno;
        abort_write(w);
        send_errno(id, err, "write");
        return;
    }
    w->size += n;
}

static void do_write_commit(uint32_t id) {
    struct file_write *w = find_write(id);
    if (!w) { send_error(id, E_UNKNOWN_ID, 0, "no open write %u", id); return; }
    int rc = close(w->fd);
    w->fd = -1;
    if (rc < 0) { int err = errno; abort_write(w); send_errno(id, err, "close"); return; }
    rc = w->replace ? renameat(w->dir_fd, w->temp, w->dir_fd, w->name)
                    : renameat2(w->dir_fd, w->temp, w->dir_fd, w->name, RENAME_NOREPLACE);
    if (rc < 0) { int err = errno; abort_write(w); send_errno(id, err, "rename"); return; }
    uint64_t size = w->size;
    close(w->dir_fd);
    memset(w, 0, sizeof *w);
    send_done(id, size, 0);
}

static void do_list(uint32_t id, struct rd *r) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    uint32_t max = g_u32(r);
    if (r->bad) { close(res.dir_fd); send_error(id, E_BAD_REQUEST, 0, "LIST needs path and max"); return; }
    int fd = openat(res.dir_fd, res.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        struct stat st;
        if ((err == ENOTDIR || err == ELOOP) && fstatat(res.dir_fd, res.name, &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISLNK(st.st_mode)) {
            send_error(id, E_SYMLINK, ELOOP, "is a symbolic link");
        } else {
            send_errno(id, err, "list");
        }
        close(res.dir_fd);
        return;
    }
    close(res.dir_fd);
    DIR *d = fdopendir(fd);
    if (!d) { send_errno(id, errno, "list"); close(fd); return; }
    uint32_t count = 0, in_batch = 0;
    uint8_t truncated = 0;
    r_reset();
    r_u32(0);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (count >= max) { truncated = 1; break; }
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue; /* gone meanwhile */
        r_bytes(e->d_name, strlen(e->d_name));
        r_u8(kind_of(st.st_mode));
        r_u32(st.st_mode & 07777);
        r_u64((uint64_t) st.st_size);
        r_u64((uint64_t) mtime_ns(&st));
        count++;
        in_batch++;
        if (reply_len > LIST_BATCH) {
            put_be(reply, in_batch, 4);
            r_send(T_ENTRIES, id);
            r_reset();
            r_u32(0);
            in_batch = 0;
        }
    }
    closedir(d);
    if (in_batch > 0) {
        put_be(reply, in_batch, 4);
        r_send(T_ENTRIES, id);
    }
    send_done(id, count, truncated);
}

static void do_mkdir(uint32_t id, struct rd *r) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    uint32_t mode = g_u32(r);
    if (r->bad) { close(res.dir_fd); send_error(id, E_BAD_REQUEST, 0, "MKDIR needs path and mode"); return; }
    int rc = mkdirat(res.dir_fd, res.name, mode & 07777);
    int err = errno;
    close(res.dir_fd);
    if (rc < 0) send_errno(id, err, "mkdir");
    else send_done(id, 0, 0);
}

static void do_unlink(uint32_t id, struct rd *r, int flags) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    if (strcmp(res.name, ".") == 0) { close(res.dir_fd); send_error(id, E_BAD_REQUEST, 0, "refusing /"); return; }
    int rc = unlinkat(res.dir_fd, res.name, flags);
    int err = errno;
    close(res.dir_fd);
    if (rc < 0) send_errno(id, err, flags ? "rmdir" : "unlink");
    else send_done(id, 0, 0);
}

/* Removes everything under parent/name, entering directories with O_NOFOLLOW only. */
static int remove_contents(int parent, const char *name, int depth, uint64_t *removed) {
    if (depth > TREE_DEPTH_MAX) { errno = ELOOP; return -1; }
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    DIR *d = fdopendir(fd);
    if (!d) { close(fd); return -1; }
    int again = 1, rc = 0;
    while (again && rc == 0) { /* another pass if the directory changed while it was read */
        again = 0;
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            struct stat st;
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
            if (S_ISDIR(st.st_mode)) {
                if (remove_contents(dirfd(d), e->d_name, depth + 1, removed) < 0) { rc = -1; break; }
                if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0) { rc = -1; break; }
            } else if (unlinkat(dirfd(d), e->d_name, 0) < 0) {
                rc = -1;
                break;
            }
            (*removed)++;
            again = 1;
        }
    }
    int err = errno;
    closedir(d);
    errno = err;
    return rc;
}

static void do_remove_tree(uint32_t id, struct rd *r) {
    struct resolved res;
    if (resolve(id, r, &res) < 0) return;
    if (strcmp(res.name, ".") == 0) { close(res.dir_fd); send_error(id, E_BAD_REQUEST, 0, "refusing /"); return; }
    struct stat st;
    uint64_t removed = 0;
    int rc;
    if (fstatat(res.dir_fd, res.name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
        rc = remove_contents(res.dir_fd, res.name, 0, &removed);
        if (rc == 0) rc = unlinkat(res.dir_fd, res.name, AT_REMOVEDIR);
    } else {
        rc = unlinkat(res.dir_fd, res.name, 0);
    }
    int err = errno;
    close(res.dir_fd);
    if (rc < 0) send_errno(id, err, "remove");
    else send_done(id, removed + 1, 0);
}

/* ---------- exec ---------- */

static struct exec *find_exec(uint32_t id) {
    for (int i = 0; i < MAX_EXECS; i++)
        if (execs[i].used && execs[i].id == id) return &execs[i];
    return NULL;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    write_all(fd, text, strlen(text));
    close(fd);
}

static void reap(void);

/* Whether the NUL-separated environment read from fd holds an entry equal to want (prefix: starting with it):
   1 or 0, or -1 when nothing could be read. Reads at most ENVIRON_SCAN_MAX bytes, in chunks. */
static int environ_matches(int fd, const char *want, size_t want_len, int prefix) {
    static char chunk[ENVIRON_CHUNK];
    size_t pos = 0, total = 0; /* pos: index in the current entry */
    int matching = 1;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return total == 0 ? -1 : 0;
        for (ssize_t i = 0; i < n; i++) {
            char c = chunk[i];
            if (matching) {
                if (pos < want_len) matching = c == want[pos];
                else if (prefix || c == 0) return 1;
                else matching = 0;
            }
            if (c == 0) { pos = 0; matching = 1; }
            else pos++;
        }
        total += (size_t) n;
        if (total >= ENVIRON_SCAN_MAX) return 0;
    }
}

/* Whether /proc/<pid>/<name> (under the /proc descriptor) reads empty: no byte at all. */
static int proc_file_empty(int proc, long pid, const char *name) {
    char path[64], one;
    snprintf(path, sizeof path, "%ld/%s", pid, name);
    int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0; /* gone, or not ours to read: nothing to wait for */
    ssize_t n;
    do n = read(fd, &one, 1); while (n < 0 && errno == EINTR);
    close(fd);
    return n == 0;
}

/* One scan of /proc: SIGKILL to every live process (not this agent) whose environment holds the marker, or
   whose process group or session is group (> 0). Returns how many it found, counting those it cannot judge yet:
   a process in the middle of execve has an empty environment for a moment (the new image's is not laid out yet),
   so in the first round any empty environment, and in every round one without arguments either, is looked at
   again in the next round rather than taken for one without the marker. A process whose environment is empty by
   choice still has its arguments, so it holds the scan up for one round at most. */
static int kill_marked_once(const char *want, int prefix, pid_t group, int first_round) {
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0) return 0;
    DIR *d = fdopendir(proc);
    if (!d) { close(proc); return 0; }
    size_t want_len = strlen(want);
    pid_t self = getpid();
    int found = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self) continue;
        char path[64], stat_text[512];
        snprintf(path, sizeof path, "%ld/stat", pid);
        int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, stat_text, sizeof stat_text - 1);
        close(fd);
        if (n <= 0) continue;
        stat_text[n] = 0;
        char state = 0;
        long ppid = 0, pgrp = 0, session_id = 0;
        unsigned long flags = 0;
        char *after = strrchr(stat_text, ')'); /* the command name may hold anything but ends at the last ')' */
        if (!after || sscanf(after + 1, " %c %ld %ld %ld %*d %*d %lu", &state, &ppid, &pgrp, &session_id, &flags) != 5)
            continue;
        if (state == 'Z' || state == 'X') continue; /* dead: only its parent's wait removes it */
        if (flags & PF_KTHREAD_FLAG) continue;     /* a kernel thread: no environment, never a guest's */
        int match = group > 0 && (pgrp == group || session_id == group);
        if (!match) {
            snprintf(path, sizeof path, "%ld/environ", pid);
            fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            int matched = environ_matches(fd, want, want_len, prefix);
            close(fd);
            if (matched < 0 && (first_round || proc_file_empty(proc, pid, "cmdline"))) {
                found++; /* maybe mid-execve (or exiting): judged in the next round */
                continue;
            }
            match = matched > 0;
        }
        if (match && kill((pid_t) pid, SIGKILL) == 0) found++;
    }
    closedir(d);
    return found;
}

/* Kills every process carrying the marker until a scan finds none alive, within KILL_ROUNDS and KILL_BOUND_MS;
   orphans the kill makes come back to this agent (a subreaper) and are reaped between scans. */
static int kill_marked(const char *want, int prefix, pid_t group) {
    long long until = monotonic_ms() + KILL_BOUND_MS;
    useconds_t pause_us = 1000;
    for (int round = 0; round < KILL_ROUNDS; round++) {
        if (kill_marked_once(want, prefix, group, round == 0) == 0) return TREE_ENDED;
        if (monotonic_ms() >= until) break;
        usleep(pause_us);
        if (pause_us < KILL_PAUSE_MAX_US) pause_us *= 2;
        reap();
    }
    logf_("processes carrying %s survived %d kill rounds", want, KILL_ROUNDS);
    return TREE_SURVIVED;
}

/* Ends the exec's whole tree by the strongest means the agent has; returns enum tree. */
static int end_tree(struct exec *e) {
    if (e->ns_init) {
        if (!e->exited) kill(e->pid, SIGKILL); /* PID 1 of the exec's namespace: the kernel ends all of it */
        return TREE_ENDED;
    }
    int tree = TREE_UNKNOWN;
    if (e->cgroup[0]) {
        char path[352];
        snprintf(path, sizeof path, "%s/cgroup.kill", e->cgroup);
        write_file(path, "1");
        tree = TREE_ENDED;
    }
    kill(-e->pid, SIGKILL); /* the exec's own process group; its pid stays reserved while the group lives */
    if (!e->exited) kill(e->pid, SIGKILL);
    if (e->marker[0]) tree = kill_marked(e->marker, 0, e->pid);
    return tree;
}

static void kill_tree(struct exec *e) {
    e->killed = 1;
    if (e->tree_done && !e->ns_init) return; /* ended already, when its leader exited */
    e->tree = end_tree(e);
    e->tree_done = 1;
}

/* Whether a cgroup holds no process (and so none can join it: only we write cgroup.procs). */
static int cgroup_empty(int fd) {
    char events[128];
    int ev = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    if (ev < 0) return 0;
    ssize_t n = read(ev, events, sizeof events - 1);
    close(ev);
    if (n <= 0) return 0;
    events[n] = 0;
    return strstr(events, "populated 0") != NULL;
}

/* A cgroup for one exec, empty: a spare one, or a new one. 0, or -1 when none can be had. */
static int take_cgroup(char *path, size_t size, int *fd) {
    if (spare_cgroup_count > 0) {
        struct spare_cgroup *c = &spare_cgroups[--spare_cgroup_count];
        snprintf(path, size, "%s", c->path);
        *fd = c->fd;
        return 0;
    }
    snprintf(path, size, "%s/c%lu", cgroup_base, ++cgroup_counter);
    if (mkdir(path, 0755) < 0 || (*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        rmdir(path);
        path[0] = 0;
        return -1;
    }
    return 0;
}

/* Keeps an exec's cgroup for another when nothing is left in it; otherwise removes it (which fails while
   leftovers live in it: harmless). */
static void give_back_cgroup(const char *path, int fd) {
    for (int i = 0; i < DRAINING_CGROUPS; i++)
        if (draining_cgroups[i][0] && rmdir(draining_cgroups[i]) == 0) draining_cgroups[i][0] = 0;
    if (fd >= 0 && spare_cgroup_count < SPARE_CGROUPS && cgroup_empty(fd)) {
        struct spare_cgroup *c = &spare_cgroups[spare_cgroup_count++];
        snprintf(c->path, sizeof c->path, "%s", path);
        c->fd = fd;
        return;
    }
    if (fd >= 0) close(fd);
    if (rmdir(path) == 0 || errno != EBUSY) return;
    for (int i = 0; i < DRAINING_CGROUPS; i++)
        if (!draining_cgroups[i][0]) { snprintf(draining_cgroups[i], sizeof draining_cgroups[i], "%s", path); return; }
    /* more than 16 at once: this one stays until the guest ends */
}

static void free_exec(struct exec *e) {
    if (e->exit_fd >= 0) close(e->exit_fd);
    close_fd(&e->out[1]);
    close_fd(&e->out[2]);
    close_fd(&e->in);
    free(e->in_buf);
    if (e->cgroup[0]) give_back_cgroup(e->cgroup, e->cgroup_fd);
    memset(e, 0, sizeof *e);
}

static void end_session(void) {
    for (int i = 0; i < MAX_EXECS; i++)
        if (execs[i].used) {
            kill_tree(&execs[i]);
            free_exec(&execs[i]);
        }
    if (marker_kill && !exec_namespaces && session) kill_marked(marker_prefix, 1, 0); /* what finished execs left behind, too */
    for (int i = 0; i < MAX_WRITES; i++)
        if (writes[i].used) abort_write(&writes[i]);
    session = 0;
}

/* In the child: exec argv[0] searching the exec's own PATH; returns the errno to report. */
static int exec_search(char **argv, char **env) {
    if (strchr(argv[0], '/')) {
        execve(argv[0], argv, env);
        return errno;
    }
    const char *path = DEFAULT_PATH;
    for (char **p = env; *p; p++)
        if (strncmp(*p, "PATH=", 5) == 0) path = *p + 5;
    int saw_eacces = 0, other = 0;
    char candidate[MAX_PATH_LEN + 256];
    const char *dir = path;
    for (;;) {
        const char *end = strchrnul(dir, ':');
        size_t dlen = (size_t) (end - dir);
        if (dlen + strlen(argv[0]) + 2 < sizeof candidate) {
            if (dlen == 0) snprintf(candidate, sizeof candidate, "./%s", argv[0]);
            else snprintf(candidate, sizeof candidate, "%.*s/%s", (int) dlen, dir, argv[0]);
            execve(candidate, argv, env);
            if (errno == EACCES) saw_eacces = 1;
            else if (errno != ENOENT && errno != ENOTDIR && !other) other = errno;
        }
        if (!*end) break;
        dir = end + 1;
    }
    return saw_eacces ? EACCES : other ? other : ENOENT;
}

static void child_fail(int status_fd, int stage, int err) {
    int msg[2] = {stage, err};
    write_all(status_fd, msg, sizeof msg);
    _exit(127);
}

/* What the child of an exec needs, read before it runs its program. */
struct child_setup {
    int stdin_fd, stdout_fd, stderr_fd, status_fd, procs_fd; /* stdin_fd -1: /dev/null; procs_fd -1: none */
    int exit_fd;  /* --exec-namespaces: where the init reports the command's wait status */
    int as_user;
    int userns;   /* --exec-user: the command is in a user namespace of its own, as exec_uid:exec_gid */
    const char *cwd;
    char **argv, **env;
};

/* Whether this process's user namespace may never call setgroups (its parent's said "deny"). */
static int setgroups_denied(void) {
    char text[16] = "";
    int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    return n > 0 && strncmp(text, "deny", 4) == 0;
}

/* In a command's own user namespace (whose maps its init wrote): no nested user namespace, exec_uid:exec_gid
   without supplementary groups, and no capability in any set, the bounding set included. 0, or -1 with errno. */
static int confine_in_userns(void) {
    /* the limit is per user namespace: 0 here refuses every user namespace made in this one */
    int fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write_all(fd, "0", 1) < 0) { int err = errno; if (fd >= 0) close(fd); errno = err; return -1; }
    close(fd);
    /* a namespace made where setgroups is denied (bubblewrap's, unless it runs as root) keeps the groups it was
       given, as every command bubblewrap itself starts does */
    if (setgroups(0, NULL) < 0 && !(errno == EPERM && setgroups_denied())) return -1;
    if (setresgid((gid_t) exec_gid, (gid_t) exec_gid, (gid_t) exec_gid) < 0
        || setresuid((uid_t) exec_uid, (uid_t) exec_uid, (uid_t) exec_uid) < 0)
        return -1;
    /* root in this namespace (exec_uid 0) gains nothing at execve either */
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
              | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) < 0)
        return -1;
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) return -1;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) return -1;
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    return (int) syscall(SYS_capset, &header, none);
}

/* The child: its own session, the sandbox user's identity, then the program; never returns. With
   CLONE_VM it shares the agent's memory (the agent waits until it execs or exits): it writes only its
   own stack and the kernel's state of its own process. */
static int exec_child(void *arg) {
    const struct child_setup *c = arg;
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    if (c->procs_fd >= 0) write_all(c->procs_fd, "0", 1);
    int devnull = c->stdin_fd >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(c->stdin_fd >= 0 ? c->stdin_fd : devnull, 0);
    dup2(c->stdout_fd, 1);
    dup2(c->stderr_fd, 2);
    umask(022);
    if (c->userns && confine_in_userns() < 0) child_fail(c->status_fd, STAGE_CREDENTIALS, errno);
    /* no_new_privs before the identity change: no setuid binary or file capability raises it again */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) child_fail(c->status_fd, STAGE_CREDENTIALS, errno);
    if (c->as_user && (setgroups(0, NULL) < 0 || setresgid((gid_t) run_gid, (gid_t) run_gid, (gid_t) run_gid) < 0
                       || setresuid((uid_t) run_uid, (uid_t) run_uid, (uid_t) run_uid) < 0))
        child_fail(c->status_fd, STAGE_CREDENTIALS, errno); /* leaving uid 0 clears every capability set */
    if (chdir(c->cwd) < 0) child_fail(c->status_fd, STAGE_CHDIR, errno);
    child_fail(c->status_fd, STAGE_EXEC, exec_search(c->argv, c->env));
    return 127;
}

#if defined(__x86_64__)
/* clone3 with the child on a stack of its own, running fn(arg) and exiting with what it returns, as glibc's
   internal __clone3 does (glibc 2.36 exports no clone3): the parent gets the pid, or -errno. */
long clone3_run(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);
__asm__(".text\n"
        ".globl clone3_run\n"
        ".type clone3_run, @function\n"
        "clone3_run:\n"
        "    mov %rcx, %r8\n"  /* arg and fn in registers the syscall keeps, for the child */
        "    mov %rdx, %r9\n"
        "    mov $435, %eax\n" /* SYS_clone3 */
        "    syscall\n"
        "    test %rax, %rax\n"
        "    jz 1f\n"
        "    ret\n"
        "1:  xor %ebp, %ebp\n"
        "    mov %r8, %rdi\n"
        "    call *%r9\n"
        "    mov %rax, %rdi\n"
        "    mov $60, %eax\n"  /* SYS_exit */
        "    syscall\n"
        "    hlt\n"
        ".size clone3_run, .-clone3_run\n");
/* The child's stack: one child at a time runs on it, while the agent waits for it to exec. */
static uint8_t child_stack[64 * 1024] __attribute__((aligned(16)));
#endif

/* Starts the child in its cgroup (cgroup_fd, or -1) without copying the agent's memory: CLONE_VM|CLONE_VFORK
   (the agent waits until the child execs or exits, which it would anyway to read its launch status), so the
   agent's pages are neither copied nor faulted in again (measured ~1 ms per exec under TCG). Returns the pid,
   or -1 with errno; ENOSYS where that is not available (the caller forks). */
static pid_t spawn_child(struct child_setup *setup, int cgroup_fd) {
#if defined(__x86_64__)
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_VM | CLONE_VFORK | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0);
    args.exit_signal = SIGCHLD;
    args.stack = (uint64_t) (uintptr_t) child_stack;
    args.stack_size = sizeof child_stack;
    if (cgroup_fd >= 0) args.cgroup = (uint64_t) cgroup_fd;
    long pid = clone3_run(&args, sizeof args, exec_child, setup);
    if (pid >= 0) return (pid_t) pid;
    errno = (int) -pid;
    return -1;
#else
    (void) setup;
    (void) cgroup_fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* Moves fd to at least 10 (clear of the numbers the init gives its descriptors); -1 stays -1. */
static int lift_fd(int fd) {
    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/* Raw clone with fork's semantics (a copy of the memory, the child returns 0), plus namespace flags. */
static pid_t clone_fork(unsigned long flags) {
    return (pid_t) syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

/* PID 1 of one exec's PID and mount namespaces (--exec-namespaces): mounts a /proc of that namespace and the
   --exec-tmpfs mounts, starts the command (in a user namespace of its own with --exec-user, whose maps it
   writes), forwards the host's signals (carried by the agent on CARRIER_SIGNAL; the kernel tells them from the
   guest's own by their sender, which an ancestor namespace's is not visible as) and ignores every other, reaps,
   and when the command exits, reports its wait status on exit_fd and exits: the kernel then kills everything
   left in the namespace. Never returns. */
static void ns_init(const struct child_setup *setup) __attribute__((noreturn));
static void ns_init(const struct child_setup *setup) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the agent gone: the namespace goes too */
    prctl(PR_SET_DUMPABLE, 0); /* the command may see it as PID 1: its memory and descriptors stay out of reach */
    /* its descriptors at fixed numbers, none of the agent's others (another exec's stdin would never close) */
    int devnull = setup->stdin_fd >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
    int from[5] = {lift_fd(setup->stdin_fd >= 0 ? setup->stdin_fd : devnull), lift_fd(setup->stdout_fd),
                   lift_fd(setup->stderr_fd), lift_fd(setup->status_fd), lift_fd(setup->exit_fd)};
    for (int fd = 0; fd < 5; fd++)
        if (from[fd] < 0 || dup2(from[fd], fd) < 0) _exit(127);
    syscall(SYS_close_range, 5, ~0U, 0);
    fcntl(3, F_SETFD, FD_CLOEXEC); /* the launch status: closed by the command's execve */
    int fail_stage = STAGE_NAMESPACE;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
        || mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        child_fail(3, fail_stage, errno);
    for (int i = 0; i < exec_tmpfs_count; i++)
        if (mount("tmpfs", exec_tmpfs[i], "tmpfs", MS_NOSUID | MS_NODEV, exec_tmpfs_options) < 0)
            child_fail(3, fail_stage, errno);
    int signals = signalfd(-1, &all, SFD_CLOEXEC);
    int go[2];
    if (signals < 0 || pipe2(go, O_CLOEXEC) < 0) child_fail(3, fail_stage, errno);
    pid_t command = clone_fork(setup->userns ? CLONE_NEWUSER : 0);
    if (command < 0) child_fail(3, fail_stage, errno);
    if (command == 0) {
        close(4);
        close(go[1]);
        char byte;
        if (setup->userns && read(go[0], &byte, 1) != 1) _exit(127); /* its maps are not written */
        close(go[0]);
        struct child_setup c = *setup;
        c.stdin_fd = 0;
        c.stdout_fd = 1;
        c.stderr_fd = 2;
        c.status_fd = 3;
        c.procs_fd = -1;
        _exit(exec_child(&c));
    }
    close(go[0]);
    if (setup->userns) {
        char path[64], map[64];
        const char *files[2] = {"uid_map", "gid_map"}; /* setgroups stays as it is: the command drops its groups */
        for (int i = 0; i < 2; i++) {
            /* exec_uid:exec_gid is the agent's own identity (the only one its namespace is sure to map) */
            snprintf(map, sizeof map, "%ld %ld 1\n", i == 0 ? exec_uid : exec_gid,
                     i == 0 ? (long) geteuid() : (long) getegid());
            snprintf(path, sizeof path, "/proc/%d/%s", (int) command, files[i]);
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            if (fd < 0 || write_all(fd, map, strlen(map)) < 0) {
                int err = errno;
                kill(command, SIGKILL);
                child_fail(3, STAGE_CREDENTIALS, err);
            }
            close(fd);
        }
        if (write_all(go[1], "1", 1) < 0) _exit(127);
    }
    close(go[1]);
    close(3);
    for (;;) {
        struct signalfd_siginfo info;
        ssize_t n = read(signals, &info, sizeof info);
        if (n != (ssize_t) sizeof info) continue;
        if (info.ssi_signo == SIGCHLD) {
            int status;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                if (pid == command) {
                    write_all(4, &status, sizeof status);
                    _exit(0);
                }
        } else if ((int) info.ssi_signo == CARRIER_SIGNAL && info.ssi_code == SI_QUEUE && info.ssi_pid == 0) {
            /* from the agent: sent from outside this namespace, so no sender pid here. A guest that forges
               one reaches only its own command, which it could signal itself */
            int signo = info.ssi_int & 0xff, scope = (info.ssi_int >> 8) & 1;
            kill(scope ? -command : command, signo);
        }
    }
}

/* Starts the exec's init in new PID and mount namespaces; returns its pid (in the agent's namespace). */
static pid_t spawn_ns(const struct child_setup *setup) {
    pid_t pid = clone_fork(CLONE_NEWPID | CLONE_NEWNS);
    if (pid == 0) ns_init(setup);
    return pid;
}

/* The exec's environment with its marker first: a copy of env, any S4J_EXEC entry of the host's left out. */
static char **with_marker(char **env, const char *marker) {
    size_t count = 0;
    for (char **p = env; *p; p++) count++;
    char **out = calloc(count + 2, sizeof *out);
    if (!out) return NULL;
    size_t n = 0;
    out[n++] = (char *) marker;
    for (char **p = env; *p; p++)
        if (strncmp(*p, MARKER_NAME "=", sizeof MARKER_NAME) != 0) out[n++] = *p;
    return out;
}

static void do_exec(uint32_t id, struct rd *r) {
    if (id == 0 || find_exec(id)) { send_error(id, E_ID_IN_USE, 0, "exec id %u is in use or 0", id); return; }
    struct exec *e = NULL;
    for (int i = 0; i < MAX_EXECS && !e; i++)
        if (!execs[i].used) e = &execs[i];
    if (!e) { send_error(id, E_LIMIT, 0, "more than %d running execs", MAX_EXECS); return; }
    char **marked_env = NULL;
    uint32_t flags = g_u32(r);
    char *cwd = g_string(r, MAX_PATH_LEN);
    char **argv = g_string_list(r, 1, MAX_ARGS);
    char **env = g_string_list(r, 0, MAX_ARGS);
    uint32_t window = g_u32(r);
    int env_ok = 1;
    for (char **p = env; p && *p; p++)
        if (!strchr(*p, '=') || **p == '=') env_ok = 0;
    if (r->bad || !cwd || cwd[0] != '/' || !argv || !env || !env_ok || argv[0][0] == 0
        || (window != 0 && (window < WINDOW_MIN || window > WINDOW_MAX))) {
        send_error(id, E_BAD_REQUEST, 0, "EXEC needs flags, absolute cwd, argv (1..%d), NAME=value env, window",
                   MAX_ARGS);
        goto out;
    }
    if (window == 0) window = WINDOW_DEFAULT;

    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, status[2] = {-1, -1}, exited[2] = {-1, -1};
    int procs = -1, cgroup_fd = -1;
    char cgroup[320] = "", marker[MARKER_MAX] = "";
    int want_stdin = flags & EXEC_STDIN;
    /* the host's own setup (making the work dir) runs as the agent; every command runs as --user */
    int as_user = run_uid >= 0 && !(flags & EXEC_AS_AGENT);
    int userns = exec_uid >= 0 && !(flags & EXEC_AS_AGENT);
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0
        || (want_stdin && pipe2(in, O_CLOEXEC) < 0) || (exec_namespaces && pipe2(exited, O_CLOEXEC) < 0)) {
        send_error(id, E_LAUNCH, errno, "pipe: %s", strerror(errno));
        goto close_pipes;
    }
    /* bigger pipes, best effort (the default, 64 KiB, otherwise), never beyond the host's window: a host that
       grants little wants the command held back soon */
    if (window > PIPE_DEFAULT_SIZE) {
        fcntl(out[0], F_SETPIPE_SZ, window < OUT_PIPE_SIZE ? (int) window : OUT_PIPE_SIZE);
        fcntl(err[0], F_SETPIPE_SZ, window < ERR_PIPE_SIZE ? (int) window : ERR_PIPE_SIZE);
    }
    if (marker_kill && !exec_namespaces) {
        snprintf(marker, sizeof marker, "%s%lu", marker_prefix, ++marker_counter);
        if (!(marked_env = with_marker(env, marker))) {
            send_error(id, E_LAUNCH, ENOMEM, "no memory for the environment");
            goto close_pipes;
        }
    }
    if (cgroup_base[0]) take_cgroup(cgroup, sizeof cgroup, &cgroup_fd); /* else the process group alone */
    struct child_setup setup = {.stdin_fd = want_stdin ? in[0] : -1, .stdout_fd = out[1], .stderr_fd = err[1],
                                .status_fd = status[1], .procs_fd = -1, .exit_fd = exited[1], .as_user = as_user,
                                .userns = userns, .cwd = cwd, .argv = argv, .env = marked_env ? marked_env : env};
    pid_t pid;
    if (exec_namespaces) {
        pid = spawn_ns(&setup);
    } else {
        /* born in its cgroup: moving it there through cgroup.procs costs an RCU grace period (~10 ms on TCG) */
        pid = spawn_child(&setup, cgroup_fd);
    }
    if (!exec_namespaces && pid < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL)) { /* not x86-64, or a kernel before 5.7 */
        if (cgroup_fd >= 0) setup.procs_fd = procs = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        pid = fork();
        if (pid == 0) _exit(exec_child(&setup));
    }
    if (pid < 0) {
        send_error(id, E_LAUNCH, errno, "fork: %s", strerror(errno));
        goto close_pipes;
    }
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&status[1]);
    close_fd(&exited[1]);
    close_fd(&in[0]);
    if (procs >= 0) close(procs);
    int msg[2];
    ssize_t got;
    do got = read(status[0], msg, sizeof msg); while (got < 0 && errno == EINTR);
    close_fd(&status[0]);
    if (got == (ssize_t) sizeof msg) { /* the child never reached its program */
        waitpid(pid, NULL, 0);
        if (msg[0] == STAGE_CREDENTIALS) {
            send_error(id, E_LAUNCH, msg[1], "dropping to the sandbox user: %s", strerror(msg[1]));
        } else if (msg[0] == STAGE_NAMESPACE) {
            send_error(id, E_LAUNCH, msg[1], "setting up the exec's namespaces: %s", strerror(msg[1]));
        } else if (msg[0] == STAGE_CHDIR) {
            uint16_t code = msg[1] == ENOENT ? E_CWD_NOT_FOUND : msg[1] == ENOTDIR ? E_CWD_NOT_DIRECTORY : E_LAUNCH;
            send_error(id, code, msg[1], "cwd %s: %s", cwd, strerror(msg[1]));
        } else if (msg[1] == ENOENT || msg[1] == EACCES || msg[1] == ENOEXEC || msg[1] == ENOTDIR) {
            int missing = msg[1] == ENOENT || msg[1] == ENOTDIR;
            r_reset();
            r_u8(0);
            r_u32(missing ? 127 : 126);
            r_u8(missing ? LAUNCH_NOT_FOUND : LAUNCH_NOT_EXECUTABLE);
            r_u8(TREE_ENDED); /* nothing ran */
            r_send(T_EXIT, id);
        } else {
            send_error(id, E_LAUNCH, msg[1], "exec %s: %s", argv[0], strerror(msg[1]));
        }
        goto close_pipes;
    }
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->id = id;
    e->pid = pid;
    e->out[0] = -1;
    e->out[1] = out[0];
    e->out[2] = err[0];
    e->credit[1] = e->credit[2] = window;
    e->in = want_stdin ? in[1] : -1;
    strcpy(e->cgroup, cgroup);
    e->cgroup_fd = cgroup_fd;
    cgroup_fd = -1;
    e->end_tree = (flags & EXEC_END_TREE) != 0;
    e->ns_init = exec_namespaces;
    e->exit_fd = exited[0];
    exited[0] = -1;
    if (e->exit_fd >= 0) fcntl(e->exit_fd, F_SETFL, O_NONBLOCK);
    strcpy(e->marker, marker);
    fcntl(e->out[1], F_SETFL, O_NONBLOCK);
    fcntl(e->out[2], F_SETFL, O_NONBLOCK);
    if (e->in >= 0) fcntl(e->in, F_SETFL, O_NONBLOCK);
    r_reset();
    r_u32((uint32_t) pid);
    r_send(T_STARTED, id);
    goto out;

close_pipes:
    close_fd(&out[0]); close_fd(&out[1]);
    close_fd(&err[0]); close_fd(&err[1]);
    close_fd(&in[0]); close_fd(&in[1]);
    close_fd(&status[0]); close_fd(&status[1]);
    close_fd(&exited[0]); close_fd(&exited[1]);
    if (procs >= 0) close(procs);
    if (cgroup[0]) give_back_cgroup(cgroup, cgroup_fd); /* closes it */
out:
    free(marked_env); /* its strings are env's and marker's */
    free(cwd);
    free_strings(argv);
    free_strings(env);
}

/* Sends n bytes that wait in a command's pipe as one OUT frame, moved from pipe to pipe by splice(2): the
   kernel hands the pages over, the agent never copies them. Should splice refuse, the rest is copied; bytes
   that vanished meanwhile (taken by whoever else could reach the pipe) are sent as zeros, so the frame keeps
   the length its prefix promised and the stream its sync. */
static void splice_out(struct exec *e, int stream, size_t n) {
    static uint8_t copied[16 * 1024];
    static const uint8_t zeros[4096];
    uint8_t fields[5];
    fields[0] = (uint8_t) stream;
    put_be(fields + 1, n, 4);
    if (send_head(T_OUT, e->id, fields, sizeof fields, n) < 0) return;
    size_t left = n;
    while (left > 0) {
        ssize_t moved = splice(e->out[stream], NULL, out_fd, NULL, left, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (moved > 0) { left -= (size_t) moved; continue; }
        if (moved < 0 && errno == EINTR) continue;
        int waiting = 0;
        if (moved < 0 && errno == EAGAIN && ioctl(e->out[stream], FIONREAD, &waiting) == 0 && waiting > 0) {
            struct pollfd pfd = {.fd = out_fd, .events = POLLOUT}; /* the host's pipe is full */
            poll(&pfd, 1, 1000);
            lease_check();
            continue;
        }
        if (moved < 0 && errno != EAGAIN) splice_to_host = 0; /* not here: copy from now on */
        break;
    }
    while (left > 0) {
        ssize_t got = read(e->out[stream], copied, left < sizeof copied ? left : sizeof copied);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (write_all(out_fd, copied, (size_t) got) < 0) { host_write_failed(); return; }
        left -= (size_t) got;
    }
    while (left > 0) {
        size_t pad = left < sizeof zeros ? left : sizeof zeros;
        if (write_all(out_fd, zeros, pad) < 0) { host_write_failed(); return; }
        left -= pad;
    }
}

/* Forwards one chunk of a stream within its credit: 1 sent, 0 nothing now, -1 closed. */
static int pump_out(struct exec *e, int stream) {
    if (e->out[stream] < 0) return -1;
    if (e->credit[stream] == 0) return 0;
    size_t want = e->credit[stream] < OUT_CHUNK ? e->credit[stream] : OUT_CHUNK;
    int waiting = 0;
    if (splice_to_host && !port_down && ioctl(e->out[stream], FIONREAD, &waiting) == 0 && waiting > 0) {
        /* what waits goes now, a few frames at most (one wake-up, not one per frame; other streams get their turn) */
        for (int frames = 0; frames < SPLICE_FRAMES_PER_WAKE && waiting > 0 && e->credit[stream] > 0 && !port_down;
             frames++) {
            size_t limit = e->credit[stream] < OUT_CHUNK ? e->credit[stream] : OUT_CHUNK;
            size_t n = (size_t) waiting < limit ? (size_t) waiting : limit;
            splice_out(e, stream, n);
            e->credit[stream] -= (uint32_t) n;
            waiting -= (int) n;
        }
        return 1;
    }
    /* nothing waits (the command closed its end, or a spurious wake-up), or no splice: read() tells */
    /* read straight into the frame's payload, after its stream and length fields: no copy */
    r_reset();
    r_u8((uint8_t) stream);
    r_u32(0);
    ssize_t n = read(e->out[stream], reply + reply_len, want);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) { close_fd(&e->out[stream]); return -1; }
    e->credit[stream] -= (uint32_t) n;
    put_be(reply + 1, (uint64_t) n, 4);
    reply_len += (size_t) n;
    r_send(T_OUT, e->id);
    return 1;
}

static void pump_in(struct exec *e) {
    if (e->in < 0) return;
    size_t written = 0;
    while (written < e->in_len) {
        ssize_t n = write(e->in, e->in_buf + written, e->in_len - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n < 0) { written = e->in_len; close_fd(&e->in); break; } /* reader gone: the bytes are moot */
        written += (size_t) n;
    }
    if (written > 0) {
        memmove(e->in_buf, e->in_buf + written, e->in_len - written);
        e->in_len -= written;
        r_reset();
        r_u32((uint32_t) written);
        r_send(T_STDIN_ACK, e->id);
    }
    if (e->in_len == 0 && e->in_close_pending) close_fd(&e->in);
}

/* After the leader exited: forward what the pipes hold, then EXIT. Not waiting for EOF: see PROTOCOL.md. */
static void try_finish(struct exec *e) {
    int settled = 1;
    if (e->ns_init && !e->tree_done) {
        e->tree = TREE_ENDED; /* its init exited: the kernel ended everything in its namespace with it */
        e->tree_done = 1;
    } else if (e->end_tree && !e->tree_done) {
        e->tree = end_tree(e); /* leftovers holding the pipes die: what they wrote is still forwarded */
        e->tree_done = 1;
    }
    if (e->killed) { /* no credit will come for a killed command: drop what its pipes still hold */
        close_fd(&e->out[1]);
        close_fd(&e->out[2]);
    }
    for (int s = 1; s <= 2; s++) {
        int rc;
        while ((rc = pump_out(e, s)) == 1) {}
        if (rc == 0 && e->out[s] >= 0 && e->credit[s] == 0) settled = 0; /* wait for the host's credit */
    }
    if (!settled || !e->used) return;
    r_reset();
    if (WIFSIGNALED(e->status)) {
        r_u8(1);
        r_u32((uint32_t) WTERMSIG(e->status));
    } else {
        r_u8(0);
        r_u32((uint32_t) WEXITSTATUS(e->status));
    }
    r_u8(LAUNCH_RAN);
    r_u8((uint8_t) e->tree);
    r_send(T_EXIT, e->id);
    free_exec(e);
}

static void reap(void) {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        if (pid == egress_pid) egress_exited(st);
        for (int i = 0; i < MAX_EXECS; i++)
            if (execs[i].used && !execs[i].exited && execs[i].pid == pid) {
                execs[i].exited = 1;
                execs[i].status = st;
                int reported; /* an init that exited by itself wrote its command's wait status first */
                if (execs[i].exit_fd >= 0 && read(execs[i].exit_fd, &reported, sizeof reported) == sizeof reported)
                    execs[i].status = reported;
            }
    }
}

static struct exec *exec_or_error(uint32_t id) {
    struct exec *e = find_exec(id);
    if (!e) send_error(id, E_UNKNOWN_ID, 0, "no running exec %u", id);
    return e;
}

static void do_stdin(uint32_t id, struct rd *r) {
    struct exec *e = exec_or_error(id);
    if (!e) return;
    size_t n;
    const uint8_t *p = g_bytes(r, STDIN_DATA_MAX, &n);
    if (!p) { send_error(id, E_BAD_REQUEST, 0, "STDIN data of at most %d bytes", STDIN_DATA_MAX); return; }
    if (e->in < 0 || e->in_close_pending) {
        r_reset(); r_u32((uint32_t) n); r_send(T_STDIN_ACK, id); /* nobody reads: consumed */
        return;
    }
    if (e->in_len + n > STDIN_WINDOW) {
        close_fd(&e->in);
        send_error(id, E_FLOW, 0, "more than %d stdin bytes unacknowledged; stdin closed", STDIN_WINDOW);
        return;
    }
    if (!e->in_buf && !(e->in_buf = malloc(STDIN_WINDOW))) {
        send_error(id, E_LAUNCH, ENOMEM, "no memory for stdin");
        return;
    }
    memcpy(e->in_buf + e->in_len, p, n);
    e->in_len += n;
    pump_in(e);
}

static void do_signal(uint32_t id, struct rd *r) {
    struct exec *e = exec_or_error(id);
    if (!e) return;
    uint32_t signo = g_u32(r);
    uint8_t scope = g_u8(r);
    if (r->bad || signo < 1 || signo > 64 || scope > 1) {
        send_error(id, E_BAD_REQUEST, 0, "SIGNAL needs signo 1..64 and scope 0|1");
        return;
    }
    if (e->ns_init) {
        if (e->exited) return;
        union sigval carried = {.sival_int = (int) (signo | (uint32_t) scope << 8)};
        sigqueue(e->pid, CARRIER_SIGNAL, carried); /* its init passes it on to the command */
    } else if (scope == 1) {
        kill(-e->pid, (int) signo);
    } else if (!e->exited) {
        kill(e->pid, (int) signo);
    }
}

static void do_output_ack(uint32_t id, struct rd *r) {
    struct exec *e = find_exec(id);
    uint8_t stream = g_u8(r);
    uint32_t bytes = g_u32(r);
    if (r->bad || stream < 1 || stream > 2) { send_error(id, E_BAD_REQUEST, 0, "OUTPUT_ACK stream 1|2, bytes"); return; }
    if (!e) return; /* acks may cross an EXIT */
    uint64_t credit = (uint64_t) e->credit[stream] + bytes;
    e->credit[stream] = credit > WINDOW_MAX ? WINDOW_MAX : (uint32_t) credit;
}

/* ---------- session, misc ---------- */

static void do_hello(uint32_t id, struct rd *r) {
    uint16_t min = g_u16(r), max = g_u16(r);
    size_t nonce_len;
    const uint8_t *nonce = g_bytes(r, NONCE_MAX, &nonce_len);
    if (session) end_session();
    if (!nonce || nonce_len < NONCE_MIN) {
        send_error(id, E_BAD_REQUEST, 0, "HELLO needs versions and a nonce of %d..%d bytes", NONCE_MIN, NONCE_MAX);
        return;
    }
    if (min > PROTO_VERSION || max < PROTO_VERSION) {
        send_error(id, E_VERSION, 0, "agent speaks version %d only", PROTO_VERSION);
        return;
    }
    struct utsname u;
    if (uname(&u) < 0) strcpy(u.release, "?");
    r_reset();
    r_u16(PROTO_VERSION);
    r_bytes(nonce, nonce_len);
    r_u32(MAX_PAYLOAD);
    r_u32((pid1 ? HELLO_PID1 : 0u) | (cgroup_base[0] ? HELLO_CGROUP_KILL : 0u) | HELLO_LEASE
          | (marker_kill && !exec_namespaces ? HELLO_MARKER_KILL : 0u) | (exec_namespaces ? HELLO_EXEC_NAMESPACES : 0u)
          | (exec_uid >= 0 ? HELLO_EXEC_USER : 0u) | HELLO_TREE_REPORT);
    r_bytes(AGENT_NAME, strlen(AGENT_NAME));
    r_bytes(u.release, strlen(u.release));
    session = 1;
    r_send(T_HELLO_OK, id);
}

static void do_reseed(uint32_t id, struct rd *r) {
    size_t n;
    const uint8_t *p = g_bytes(r, RESEED_MAX, &n);
    if (!p || n == 0) { send_error(id, E_BAD_REQUEST, 0, "RESEED needs 1..%d bytes", RESEED_MAX); return; }
    int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    if (fd < 0) { send_errno(id, errno, "/dev/urandom"); return; }
    uint64_t credited = 0;
    struct rand_pool_info *info = malloc(sizeof *info + n + 4);
    if (info) {
        info->entropy_count = (int) (n * 8);
        info->buf_size = (int) n;
        memcpy(info->buf, p, n);
        if (ioctl(fd, RNDADDENTROPY, info) == 0) credited = n * 8;
        free(info);
    }
    /* Added entropy reaches /dev/urandom only at the kernel's next periodic reseed (up to a minute): rekey the
       generator now, so guests restored from one snapshot part ways at once */
    if (credited) ioctl(fd, RNDRESEEDCRNG);
    if (credited == 0 && write_all(fd, p, n) < 0) { /* not permitted to credit: still mix the bytes in */
        int err = errno;
        close(fd);
        send_errno(id, err, "write /dev/urandom");
        return;
    }
    close(fd);
    send_done(id, credited, 0);
}

/* A restored guest's clock runs on from the snapshot's instant: the host sets it. */
static void do_set_clock(uint32_t id, struct rd *r) {
    int64_t seconds = (int64_t) g_u64(r);
    uint32_t nanos = g_u32(r);
    if (r->bad || seconds < 0 || nanos >= 1000000000u) {
        send_error(id, E_BAD_REQUEST, 0, "SET_CLOCK needs i64 seconds >= 0 and u32 nanoseconds < 10^9");
        return;
    }
    struct timespec now = {.tv_sec = (time_t) seconds, .tv_nsec = (long) nanos};
    if (clock_settime(CLOCK_REALTIME, &now) < 0) { send_errno(id, errno, "clock_settime"); return; }
    send_done(id, 0, 0);
}

/* Ends the guest: powered off as PID 1, so its QEMU exits; otherwise the agent exits. */
static void power_off(void) __attribute__((noreturn));
static void power_off(void) {
    if (!pid1) exit(0);
    reboot(RB_POWER_OFF);
    reboot(RB_AUTOBOOT); /* QEMU with -no-reboot exits on a reboot as well */
    exit(0);
}

static void do_shutdown(uint32_t id) {
    end_session();
    sync();
    send_done(id, 0, 0);
    power_off();
}

/* The host vouches for the guest for `seconds` more (0: no longer bounded). Not tied to a session: a host that
   vanished renews nothing, and the guest ends itself (lease_check). Answers what was left of the previous lease. */
static void do_set_lease(uint32_t id, struct rd *r) {
    uint32_t seconds = g_u32(r);
    if (r->bad || seconds > LEASE_MAX_SECONDS) {
        send_error(id, E_BAD_REQUEST, 0, "SET_LEASE needs u32 seconds, 0..%u", LEASE_MAX_SECONDS);
        return;
    }
    long long now = monotonic_ms();
    uint64_t left = lease_deadline > now ? (uint64_t) (lease_deadline - now + 999) / 1000 : 0;
    lease_deadline = seconds ? now + (long long) seconds * 1000 : -1;
    send_done(id, left, 0);
}

/* How long poll may sleep before the lease runs out, within `timeout` (-1: no other deadline). */
static int lease_poll_timeout(int timeout) {
    if (lease_deadline < 0) return timeout;
    long long left = lease_deadline - monotonic_ms();
    int wait = left < 0 ? 0 : left > LEASE_POLL_MAX_MS ? LEASE_POLL_MAX_MS : (int) left;
    return timeout < 0 || wait < timeout ? wait : timeout;
}

/* A lease nobody renewed: whatever the host's fate, the guest does not outlive it. */
static void lease_check(void) {
    if (lease_deadline < 0 || getpid() != agent_pid || monotonic_ms() < lease_deadline) return;
    logf_("the host did not renew the lease: powering off");
    end_session();
    sync();
    power_off();
}

static void dispatch_as(uint8_t type, uint32_t id, struct rd *r);

/* File primitives run with the sandbox user's file-system identity: they can do what its commands can,
   and what they create is its own. */
static void dispatch(uint8_t type, uint32_t id, const uint8_t *payload, size_t len) {
    struct rd r = {payload, len, 0};
    int as_user = run_uid >= 0 && type >= T_LSTAT && type <= T_REMOVE_TREE;
    if (as_user) { setfsgid((gid_t) run_gid); setfsuid((uid_t) run_uid); }
    dispatch_as(type, id, &r);
    if (as_user) { setfsuid(0); setfsgid(0); }
}

static void dispatch_as(uint8_t type, uint32_t id, struct rd *rp) {
    struct rd r = *rp;
    if (type == T_HELLO) { do_hello(id, &r); return; }
    if (!session) { send_error(id, E_NOT_READY, 0, "send HELLO first"); return; }
    switch (type) {
    case T_PING: {
        size_t n;
        const uint8_t *p = g_bytes(&r, PING_MAX, &n);
        if (!p) { send_error(id, E_BAD_REQUEST, 0, "PING data of at most %d bytes", PING_MAX); return; }
        r_reset();
        r_bytes(p, n);
        r_send(T_PONG, id);
        return;
    }
    case T_RESEED: do_reseed(id, &r); return;
    case T_SHUTDOWN: do_shutdown(id); return;
    case T_SET_CLOCK: do_set_clock(id, &r); return;
    case T_SET_LEASE: do_set_lease(id, &r); return;
    case T_EXEC: do_exec(id, &r); return;
    case T_STDIN: do_stdin(id, &r); return;
    case T_STDIN_CLOSE: {
        struct exec *e = exec_or_error(id);
        if (!e) return;
        e->in_close_pending = 1;
        if (e->in_len == 0) close_fd(&e->in);
        return;
    }
    case T_SIGNAL: do_signal(id, &r); return;
    case T_KILL: { struct exec *e = exec_or_error(id); if (e) kill_tree(e); return; }
    case T_OUTPUT_ACK: do_output_ack(id, &r); return;
    case T_LSTAT: do_lstat(id, &r); return;
    case T_READ: do_read(id, &r); return;
    case T_WRITE_OPEN: do_write_open(id, &r); return;
    case T_WRITE_DATA: do_write_data(id, &r); return;
    case T_WRITE_COMMIT: do_write_commit(id); return;
    case T_WRITE_ABORT: { struct file_write *w = find_write(id); if (w) abort_write(w); return; }
    case T_LIST: do_list(id, &r); return;
    case T_MKDIR: do_mkdir(id, &r); return;
    case T_UNLINK: do_unlink(id, &r, 0); return;
    case T_RMDIR: do_unlink(id, &r, AT_REMOVEDIR); return;
    case T_REMOVE_TREE: do_remove_tree(id, &r); return;
    default: send_error(id, E_UNKNOWN_TYPE, 0, "unknown message type 0x%02x", type); return;
    }
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* Plausible start of a HELLO frame: where a stream that lost sync may resume. */
static int hello_header_at(const uint8_t *p) {
    uint32_t len = be32(p);
    return p[4] == (MAGIC >> 8) && p[5] == (MAGIC & 0xff) && p[6] == PROTO_VERSION && p[7] == T_HELLO
           && len >= HEADER_LEN + 8 + NONCE_MIN && len <= HEADER_LEN + 8 + NONCE_MAX + 1024;
}

/* Consumes every complete frame in in_buf. */
static void process_input(void) {
    size_t pos = 0;
    while (in_len - pos >= 4 + HEADER_LEN) {
        const uint8_t *f = in_buf + pos;
        if (desync) {
            if (hello_header_at(f)) desync = 0;
            else { pos++; continue; }
        }
        uint32_t len = be32(f);
        if (len < HEADER_LEN || len > HEADER_LEN + MAX_PAYLOAD || f[4] != (MAGIC >> 8) || f[5] != (MAGIC & 0xff)
            || f[6] != PROTO_VERSION) {
            send_error(0, E_PROTOCOL, 0, "bad frame (length %u, magic %02x%02x, version %u)", len, f[4], f[5], f[6]);
            end_session();
            desync = 1;
            pos++;
            continue;
        }
        if (in_len - pos < 4 + (size_t) len) break;
        dispatch(f[7], be32(f + 8), f + 4 + HEADER_LEN, len - HEADER_LEN);
        pos += 4 + len;
    }
    memmove(in_buf, in_buf + pos, in_len - pos);
    in_len -= pos;
}

/* While the host is away, a virtio port polls as hung up; the kernel sends SIGIO when the host opens it
   again (virtio_console's port-open event), which wakes the loop at once instead of at its next retry. */
static void set_port_async(int on) {
    if (stdio_mode || in_fd < 0 || port_async == on) return;
    int fl = fcntl(in_fd, F_GETFL);
    if (fl >= 0 && fcntl(in_fd, F_SETFL, on ? fl | O_ASYNC : fl & ~O_ASYNC) == 0) port_async = on;
}

static void mark_port_down(void) {
    end_session();
    in_len = 0;
    desync = 0;
    port_down = 1;
    port_down_since = monotonic_ms();
    set_port_async(1);
}

static void read_port(void) {
    ssize_t n = read(in_fd, in_buf + in_len, sizeof in_buf - in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
        if (stdio_mode) { end_session(); exit(0); }
        if (session) logf_("host closed the port");
        mark_port_down();
        return;
    }
    set_port_async(0); /* the host is back: no signal per frame */
    in_len += (size_t) n;
    process_input();
}

/* ---------- PID 1 and startup ---------- */

static void init_system(void) {
    mkdir("/proc", 0555);
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
    mkdir("/dev/pts", 0755);
    mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "gid=5,mode=620,ptmxmode=666");
    mkdir("/dev/shm", 01777);
    /* bounded: tmpfs defaults to half the guest's memory. /tmp is not a mount of its own: it lives in the
       root overlay, whose size bounds everything the guest writes */
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=16m");
    mkdir("/tmp", 01777);
    /* favordynmods (6.1+) makes creating and leaving per-exec cgroups cheaper; older kernels refuse it */
    if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, "favordynmods") < 0)
        mount("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    sethostname("sandbox", 7);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        strcpy(ifr.ifr_name, "lo");
        if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
            ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
            ioctl(s, SIOCSIFFLAGS, &ifr);
        }
        close(s);
    }
}

/* Per-exec cgroups go under our own cgroup, where cgroup v2 is mounted and writable. */
static void init_cgroups(void) {
    char own[512] = "";
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "0::", 3) == 0) {
                line[strcspn(line, "\n")] = 0;
                snprintf(own, sizeof own, "%s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
            }
        fclose(f);
    }
    char base[sizeof cgroup_base], probe[sizeof cgroup_base + 16];
    if (snprintf(base, sizeof base, "/sys/fs/cgroup%s/s4j", own) >= (int) sizeof base) return; /* too deep */
    if (mkdir(base, 0755) < 0 && errno != EEXIST) return;
    snprintf(probe, sizeof probe, "%s/cgroup.kill", base);
    if (access(probe, W_OK) == 0) strcpy(cgroup_base, base);
    if (cgroup_base[0] && pids_max > 0) {
        /* every exec's cgroup sits below base, so this bounds all their tasks together */
        char limit[32], parent_control[sizeof cgroup_base + 32], base_limit[sizeof cgroup_base + 16];
        snprintf(parent_control, sizeof parent_control, "/sys/fs/cgroup%s/cgroup.subtree_control", own);
        write_file(parent_control, "+pids");
        snprintf(base_limit, sizeof base_limit, "%s/pids.max", base);
        snprintf(limit, sizeof limit, "%ld", pids_max);
        write_file(base_limit, limit);
    }
    /* made now, so a snapshot of the idle guest holds them and a restored guest's first exec makes none */
    char paths[PREMADE_CGROUPS][320];
    int fds[PREMADE_CGROUPS], made = 0;
    while (cgroup_base[0] && made < PREMADE_CGROUPS && take_cgroup(paths[made], sizeof paths[made], &fds[made]) == 0)
        made++;
    while (made > 0) { made--; give_back_cgroup(paths[made], fds[made]); }
}

static int open_virtio_name(const char *name) {
    DIR *d = opendir("/sys/class/virtio-ports");
    if (!d) return -1;
    struct dirent *e;
    int fd = -1, found = 0;
    while (fd < 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], text[128] = "";
        snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) continue;
        if (fgets(text, sizeof text, f)) text[strcspn(text, "\n")] = 0;
        fclose(f);
        if (strcmp(text, name) != 0) continue;
        found = 1;
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    }
    int err = errno;
    closedir(d);
    errno = found ? err : ENOENT; /* what a log line then says: no such port, not a stale errno */
    return fd;
}

/* ---------- the egress tunnel (see PROTOCOL.md, "The egress tunnel") ----------
 *
 * One child process, forked by the agent and unprivileged (uid/gid 65534, no_new_privs), listens on a guest
 * TCP address and multiplexes every connection it accepts over a second port, where the host forwards each
 * stream to its allowlisting proxy. Its own poll loop; every fd non-blocking; every buffer bounded: at most
 * EGRESS_WINDOW bytes per stream from the host, one DATA frame per read from a client, and port output is
 * only produced when it fits in eg_out, so the child always keeps reading the port. */

static struct egress_stream eg_streams[EGRESS_MAX_STREAMS];
static int eg_port = -1, eg_listen = -1;
static int eg_port_is_socket; /* a unix socket (tests): its end is final, the child exits to be restarted */
static int eg_session;        /* the host's HELLO was answered */
static int eg_port_down;
static long long eg_port_down_since;
static uint32_t eg_next_id;   /* the next stream id; ids are never reused within a session */
static int eg_hello_pending;  /* a HELLO to answer */
static uint32_t eg_hello_nonce;
static uint16_t eg_hello_version;
static int eg_reset_pending;  /* a CLOSE on stream 0 to send: "no session, send HELLO" */
static int eg_reset_sent;     /* once per session lost, not per stray frame */
static uint8_t eg_in[2 * (EGRESS_HEADER_LEN + EGRESS_DATA_MAX)];
static size_t eg_in_len;
static uint8_t eg_out[EGRESS_OUT_MAX];
static size_t eg_out_len;

static int eg_room(size_t payload) { return eg_out_len + EGRESS_HEADER_LEN + payload <= sizeof eg_out; }

/* Appends one frame; callers check eg_room first. */
static void eg_frame(uint32_t stream, uint8_t type, const void *payload, size_t len) {
    uint8_t *p = eg_out + eg_out_len;
    put_be(p, stream, 4);
    p[4] = type;
    put_be(p + 5, len, 4);
    if (len) memcpy(p + EGRESS_HEADER_LEN, payload, len);
    eg_out_len += EGRESS_HEADER_LEN + len;
}

static void eg_free(struct egress_stream *s) {
    close_fd(&s->fd);
    free(s->buf);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* The guest side broke (reset, error): the host is told with CLOSE, sent by eg_emit. */
static void eg_abort(struct egress_stream *s) {
    close_fd(&s->fd);
    free(s->buf);
    s->buf = NULL;
    s->buf_len = s->buf_off = 0;
    s->close_pending = 1;
}

static void eg_end_session(void) {
    for (int i = 0; i < EGRESS_MAX_STREAMS; i++)
        if (eg_streams[i].used) eg_free(&eg_streams[i]);
    eg_session = 0;
}

/* What the host sent breaks the protocol: every stream goes, and the host is asked for a new HELLO. */
static void eg_violation(const char *fmt, ...) {
    char message[MESSAGE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    logf_("egress: the host broke the tunnel protocol (%s): session reset", message);
    eg_end_session();
    eg_reset_pending = 1;
    eg_reset_sent = 1;
}

static struct egress_stream *eg_find(uint32_t id) {
    for (int i = 0; i < EGRESS_MAX_STREAMS; i++)
        if (eg_streams[i].used && eg_streams[i].id == id) return &eg_streams[i];
    return NULL;
}

/* Writes what the host sent to the client, as far as it takes it; credit is granted for what got in. */
static void eg_deliver(struct egress_stream *s) {
    while (s->fd >= 0 && s->buf_len > 0) {
        ssize_t n = write(s->fd, s->buf + s->buf_off, s->buf_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) { eg_abort(s); return; }
        s->buf_off += (size_t) n;
        s->buf_len -= (size_t) n;
        s->grant += (uint32_t) n;
    }
    s->buf_off = 0;
    if (s->fd >= 0 && s->host_eof && !s->shut_wr) {
        shutdown(s->fd, SHUT_WR);
        s->shut_wr = 1;
    }
}

static void eg_data(struct egress_stream *s, const uint8_t *p, uint32_t len) {
    if (len == 0) { eg_violation("empty DATA on stream %u", s->id); return; }
    if (s->host_eof) { eg_violation("DATA after EOF on stream %u", s->id); return; }
    if (len > s->recv_avail) { eg_violation("%u bytes on stream %u beyond its credit of %u", len, s->id, s->recv_avail); return; }
    s->recv_avail -= len;
    if (s->close_pending) return; /* aborted here, its CLOSE is on the way: the bytes are moot */
    if (!s->buf && !(s->buf = malloc(EGRESS_WINDOW))) { eg_abort(s); return; }
    if (s->buf_off + s->buf_len + len > EGRESS_WINDOW) { /* fits: buffered + new never exceeds the window */
        memmove(s->buf, s->buf + s->buf_off, s->buf_len);
        s->buf_off = 0;
    }
    memcpy(s->buf + s->buf_off + s->buf_len, p, len);
    s->buf_len += len;
    eg_deliver(s);
}

static void eg_dispatch(uint32_t id, uint8_t type, const uint8_t *p, uint32_t len) {
    if (type == ET_HELLO) {
        if (id != 0 || len != EGRESS_HELLO_LEN || be32(p) != EGRESS_MAGIC) { eg_violation("malformed HELLO"); return; }
        eg_end_session(); /* a new HELLO ends the old session, as on the agent's own port */
        eg_hello_version = (uint16_t) (p[4] << 8 | p[5]);
        eg_hello_nonce = be32(p + 6);
        eg_hello_pending = 1;
        if (eg_hello_version == EGRESS_VERSION) {
            eg_session = 1;
            eg_next_id = 1;
            eg_reset_sent = 0;
            eg_reset_pending = 0;
        }
        return;
    }
    if (id == 0) {
        if (type == ET_CLOSE && len == 0) { eg_end_session(); return; } /* the host ends the session */
        eg_violation("frame type %u on stream 0", type);
        return;
    }
    if (type < ET_OPEN || type > ET_CREDIT || type == ET_OPEN) { eg_violation("frame type %u", type); return; }
    if (id >= eg_next_id) { eg_violation("stream %u was never opened", id); return; }
    uint32_t want = type == ET_CREDIT ? 4 : 0;
    if (type != ET_DATA && len != want) { eg_violation("frame type %u of %u bytes", type, len); return; }
    struct egress_stream *s = eg_find(id);
    if (!s) return; /* closed here already: frames that crossed our CLOSE or our last EOF */
    if (!s->open_sent) { eg_violation("stream %u was not announced yet", id); return; }
    switch (type) {
    case ET_DATA: eg_data(s, p, len); return;
    case ET_EOF:
        if (s->host_eof) { eg_violation("second EOF on stream %u", id); return; }
        s->host_eof = 1;
        eg_deliver(s);
        return;
    case ET_CLOSE: eg_free(s); return; /* the host's refusal of an OPEN, or its abort: no answer */
    case ET_CREDIT: {
        uint64_t credit = (uint64_t) s->send_credit + be32(p);
        if (credit > EGRESS_WINDOW) { eg_violation("credit beyond the window on stream %u", id); return; }
        s->send_credit = (uint32_t) credit;
        return;
    }
    }
}

/* The one frame a stream without a session may resume at: stream 0, HELLO, the magic. */
static int eg_hello_at(const uint8_t *f) {
    return be32(f) == 0 && f[4] == ET_HELLO && be32(f + 5) == EGRESS_HELLO_LEN
           && be32(f + EGRESS_HEADER_LEN) == EGRESS_MAGIC;
}

static void eg_process_input(void) {
    size_t pos = 0;
    while (eg_in_len - pos >= EGRESS_HEADER_LEN) {
        const uint8_t *f = eg_in + pos;
        uint32_t len = be32(f + 5);
        if (!eg_session) { /* skip to the next HELLO, asking for one once */
            if (eg_in_len - pos < EGRESS_HEADER_LEN + EGRESS_HELLO_LEN) break;
            if (!eg_hello_at(f)) {
                if (!eg_reset_sent) { eg_reset_pending = 1; eg_reset_sent = 1; }
                pos++;
                continue;
            }
        }
        if (len > EGRESS_DATA_MAX) { eg_violation("a frame of %u bytes", len); pos++; continue; }
        if (eg_in_len - pos < EGRESS_HEADER_LEN + (size_t) len) break;
        eg_dispatch(be32(f), f[4], f + EGRESS_HEADER_LEN, len);
        pos += EGRESS_HEADER_LEN + len;
    }
    memmove(eg_in, eg_in + pos, eg_in_len - pos);
    eg_in_len -= pos;
}

/* The host side of the port is gone: every stream with it; a virtio port is looked at again in 50 ms. */
static void eg_port_gone(void) {
    if (eg_port_is_socket) _exit(EGRESS_EXIT_PORT_CLOSED); /* the agent connects again and restarts us */
    if (eg_session) logf_("egress: host side of the port is closed");
    eg_end_session();
    eg_in_len = eg_out_len = 0;
    eg_hello_pending = eg_reset_pending = eg_reset_sent = 0;
    eg_port_down = 1;
    eg_port_down_since = monotonic_ms();
}

static void eg_read_port(void) {
    ssize_t n = read(eg_port, eg_in + eg_in_len, sizeof eg_in - eg_in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) { eg_port_gone(); return; }
    eg_in_len += (size_t) n;
    eg_process_input();
}

static void eg_flush(void) {
    while (eg_out_len > 0) {
        ssize_t n = write(eg_port, eg_out, eg_out_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) { eg_port_gone(); return; }
        memmove(eg_out, eg_out + n, eg_out_len - (size_t) n);
        eg_out_len -= (size_t) n;
    }
}

/* Turns pending state into control frames, as far as they fit: the port's output stays bounded. */
static void eg_emit(void) {
    uint8_t b[EGRESS_HELLO_LEN];
    if (eg_hello_pending && eg_room(EGRESS_HELLO_LEN)) {
        put_be(b, EGRESS_MAGIC, 4);
        put_be(b + 4, EGRESS_VERSION, 2);
        put_be(b + 6, eg_hello_nonce, 4);
        eg_frame(0, ET_HELLO, b, EGRESS_HELLO_LEN);
        eg_hello_pending = 0;
        if (eg_hello_version != EGRESS_VERSION)
            logf_("egress: the host speaks tunnel version %u, not %d", eg_hello_version, EGRESS_VERSION);
    }
    if (eg_reset_pending && eg_room(0)) {
        eg_frame(0, ET_CLOSE, NULL, 0);
        eg_reset_pending = 0;
    }
    for (int i = 0; i < EGRESS_MAX_STREAMS; i++) {
        struct egress_stream *s = &eg_streams[i];
        if (!s->used) continue;
        if (s->close_pending) {
            if (!eg_room(0)) return;
            eg_frame(s->id, ET_CLOSE, NULL, 0);
            eg_free(s);
            continue;
        }
        if (!s->open_sent) {
            if (!eg_room(0)) return;
            eg_frame(s->id, ET_OPEN, NULL, 0);
            s->open_sent = 1;
        }
        /* credit in quarter windows, or at once when the client took everything (never a stall) */
        if (s->grant > 0 && !s->host_eof && (s->grant >= EGRESS_WINDOW / 4 || s->buf_len == 0)) {
            if (!eg_room(4)) return;
            put_be(b, s->grant, 4);
            eg_frame(s->id, ET_CREDIT, b, 4);
            s->recv_avail += s->grant;
            s->grant = 0;
        }
        if (s->client_eof && !s->eof_sent) {
            if (!eg_room(0)) return;
            eg_frame(s->id, ET_EOF, NULL, 0);
            s->eof_sent = 1;
        }
        if (s->eof_sent && s->shut_wr) eg_free(s); /* both directions ended: the host forgets it too */
    }
}

/* Reads one chunk from a client, within the host's credit, as one DATA frame. */
static void eg_pump_client(struct egress_stream *s) {
    static uint8_t chunk[EGRESS_DATA_MAX];
    size_t want = s->send_credit < EGRESS_DATA_MAX ? s->send_credit : EGRESS_DATA_MAX;
    ssize_t n = read(s->fd, chunk, want);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n < 0) { eg_abort(s); return; }
    if (n == 0) { s->client_eof = 1; return; }
    eg_frame(s->id, ET_DATA, chunk, (size_t) n);
    s->send_credit -= (uint32_t) n;
}

static void eg_accept(void) {
    for (int i = 0; i < EGRESS_MAX_STREAMS; i++) {
        int fd = accept4(eg_listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        struct egress_stream *s = NULL;
        for (int j = 0; j < EGRESS_MAX_STREAMS && !s; j++)
            if (!eg_streams[j].used) s = &eg_streams[j];
        /* no session (the host is not there yet), no free stream, or ids used up: refused at once */
        if (!eg_session || eg_port_down || !s || eg_next_id == UINT32_MAX) { close(fd); continue; }
        memset(s, 0, sizeof *s);
        s->used = 1;
        s->id = eg_next_id++;
        s->fd = fd;
        s->send_credit = s->recv_avail = EGRESS_WINDOW;
    }
}

static void eg_drop_privileges(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) { logf_("egress: no_new_privs: %s", strerror(errno)); _exit(1); }
    if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(EGRESS_ID, EGRESS_ID, EGRESS_ID) < 0
                           || setresuid(EGRESS_ID, EGRESS_ID, EGRESS_ID) < 0)) {
        logf_("egress: dropping to uid %d: %s", EGRESS_ID, strerror(errno));
        _exit(1);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* after the identity change, which clears it */
}

static void egress_child(int port, int listen_fd, pid_t agent) __attribute__((noreturn));
static void egress_child(int port, int listen_fd, pid_t agent) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* keep the port, the listening socket and stderr; nothing of the agent's (its port, commands' pipes) */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) { dup2(devnull, 0); dup2(devnull, 1); }
    if (dup2(port, 3) < 0 || dup2(listen_fd, 4) < 0) _exit(1);
    if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
        for (int fd = 5; fd < 65536; fd++) close(fd);
    eg_port = 3;
    eg_listen = 4;
    struct stat st;
    eg_port_is_socket = fstat(eg_port, &st) == 0 && S_ISSOCK(st.st_mode);
    fcntl(eg_port, F_SETFL, fcntl(eg_port, F_GETFL) | O_NONBLOCK);
    eg_drop_privileges();
    if (getppid() != agent) _exit(0); /* the agent died before the death signal was armed */
    for (int i = 0; i < EGRESS_MAX_STREAMS; i++) eg_streams[i].fd = -1;

    struct pollfd pfds[2 + EGRESS_MAX_STREAMS];
    struct egress_stream *owner[2 + EGRESS_MAX_STREAMS];
    for (;;) {
        eg_emit();
        int n = 0, port_index = -1;
        if (!eg_port_down) {
            port_index = n;
            pfds[n] = (struct pollfd){.fd = eg_port, .events = POLLIN | (eg_out_len ? POLLOUT : 0)};
            owner[n++] = NULL;
        }
        int listen_index = n;
        pfds[n] = (struct pollfd){.fd = eg_listen, .events = POLLIN};
        owner[n++] = NULL;
        int data_room = eg_room(EGRESS_DATA_MAX);
        for (int i = 0; i < EGRESS_MAX_STREAMS; i++) {
            struct egress_stream *s = &eg_streams[i];
            if (!s->used || s->fd < 0) continue;
            short events = 0;
            /* a stream out of credit is not read: its client waits, no other stream does */
            if (s->open_sent && !s->client_eof && s->send_credit > 0 && data_room) events |= POLLIN;
            if (s->buf_len > 0) events |= POLLOUT;
            if (!events) continue; /* never polled for nothing: a hung-up socket would wake us forever */
            pfds[n] = (struct pollfd){.fd = s->fd, .events = events};
            owner[n++] = s;
        }
        int ready = poll(pfds, (nfds_t) n, eg_port_down ? RECONNECT_POLL_MS : -1);
        if (ready < 0 && errno != EINTR) { logf_("egress: poll: %s", strerror(errno)); sleep(1); }
        if (eg_port_down && monotonic_ms() - eg_port_down_since >= RECONNECT_POLL_MS) eg_port_down = 0;
        if (ready <= 0) continue;
        if (port_index >= 0 && pfds[port_index].revents) {
            short rev = pfds[port_index].revents;
            if (rev & POLLOUT) eg_flush();
            if (!eg_port_down && (rev & POLLIN)) eg_read_port();
            else if (!eg_port_down && (rev & (POLLHUP | POLLERR))) eg_port_gone();
        }
        for (int i = 0; i < n; i++) {
            struct egress_stream *s = owner[i];
            if (!s || !pfds[i].revents || !s->used || s->fd != pfds[i].fd) continue;
            if (pfds[i].revents & (POLLOUT | POLLHUP | POLLERR)) eg_deliver(s);
            if (s->fd >= 0 && (pfds[i].events & POLLIN) && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR))
                && eg_room(EGRESS_DATA_MAX))
                eg_pump_client(s);
        }
        if (pfds[listen_index].revents & POLLIN) eg_accept();
        if (eg_out_len > 0 && !eg_port_down) eg_flush();
    }
}

/* ---------- the egress child, from the agent's side ---------- */

static int egress_open_port(void) {
    if (!egress_port_path) return open_virtio_name(egress_virtio_name);
    struct stat st;
    if (stat(egress_port_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        if (strlen(egress_port_path) >= sizeof addr.sun_path) { errno = ENAMETOOLONG; return -1; }
        strcpy(addr.sun_path, egress_port_path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &addr, sizeof addr) < 0) {
            int err = errno;
            close(fd);
            errno = err;
            return -1;
        }
        return fd;
    }
    return open(egress_port_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
}

/* The listening socket is the agent's, made once: a restarted child needs no new bind, clients queue meanwhile. */
static int egress_listen_socket(const char *spec) {
    char host[64];
    unsigned port;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    if (sscanf(spec, "%63[0-9.]:%u", host, &port) != 2 || port == 0 || port > 65535
        || inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        logf_("egress: --egress-listen wants IPV4:PORT, not %s", spec);
        return -1;
    }
    addr.sin_port = htons((uint16_t) port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *) &addr, sizeof addr) < 0 || listen(fd, EGRESS_BACKLOG) < 0) {
        logf_("egress: cannot listen on %s: %s", spec, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Starts the child when it is due; a port that is not there is looked for briefly at boot, then given up. */
static void egress_start(void) {
    long long now = monotonic_ms();
    if (egress_pid > 0 || egress_due < 0 || now < egress_due) return;
    const char *name = egress_port_path ? egress_port_path : egress_virtio_name;
    int fd = egress_open_port();
    if (fd < 0) {
        int err = errno;
        if (!egress_started && ++egress_port_tries >= EGRESS_PORT_TRIES) {
            /* a guest made without the egress port (closed egress) has no such virtio port: nothing to say */
            if (egress_port_path || err != ENOENT)
                logf_("egress: no port %s (%s): nothing listens for egress", name, strerror(err));
            egress_due = -1;
        } else if (egress_started) {
            if (!egress_outage_logged) logf_("egress: port %s: %s; trying again every second", name, strerror(err));
            egress_outage_logged = 1;
            egress_due = now + EGRESS_RESTART_MS;
        } else {
            egress_due = now + RECONNECT_POLL_MS;
        }
        return;
    }
    if (egress_listen_fd < 0 && (egress_listen_fd = egress_listen_socket(egress_listen)) < 0) {
        close(fd);
        egress_due = -1;
        return;
    }
    pid_t agent = getpid(), pid = fork();
    if (pid == 0) egress_child(fd, egress_listen_fd, agent);
    close(fd);
    if (pid < 0) {
        logf_("egress: fork: %s", strerror(errno));
        egress_due = now + EGRESS_RESTART_MS;
        return;
    }
    if (!egress_started) logf_("egress: listening on %s, tunnel on %s", egress_listen, name);
    egress_started = 1;
    egress_outage_logged = 0;
    egress_pid = pid;
    egress_due = -1;
}

/* From reap(): the child ended; the agent itself carries on, and starts it again. */
static void egress_exited(int status) {
    egress_pid = -1;
    int closed = WIFEXITED(status) && WEXITSTATUS(status) == EGRESS_EXIT_PORT_CLOSED;
    if (!closed) {
        if (WIFSIGNALED(status)) logf_("egress: the tunnel process died of signal %d; restarting", WTERMSIG(status));
        else logf_("egress: the tunnel process exited with %d; restarting", WEXITSTATUS(status));
    }
    egress_due = monotonic_ms() + (closed ? RECONNECT_POLL_MS : EGRESS_RESTART_MS);
}

/* How long the agent's poll may sleep before the child is due to start: -1 for no deadline. */
static int egress_poll_timeout(void) {
    if (egress_pid > 0 || egress_due < 0) return -1;
    long long left = egress_due - monotonic_ms();
    return left < 0 ? 0 : left > 1000 ? 1000 : (int) left;
}

/* S4J_EXEC=<16 random hex digits>-: what this agent's markers start with, unlike any other agent's. */
static void init_marker_prefix(void) {
    uint8_t id[8];
    if (getrandom(id, sizeof id, GRND_NONBLOCK) != (ssize_t) sizeof id) {
        uint64_t fallback = (uint64_t) getpid() << 40 ^ (uint64_t) monotonic_ms();
        memcpy(id, &fallback, sizeof id);
    }
    int n = snprintf(marker_prefix, sizeof marker_prefix, "%s=", MARKER_NAME);
    for (size_t i = 0; i < sizeof id; i++) n += snprintf(marker_prefix + n, sizeof marker_prefix - (size_t) n, "%02x", id[i]);
    snprintf(marker_prefix + n, sizeof marker_prefix - (size_t) n, "-");
}

static void usage(void) {
    fprintf(stderr, "usage: s4j-agent [--init] [--no-cgroup] [--user UID:GID] [--pids-max N] "
                    "(--stdio | --port DEVICE | --virtio-name NAME)\n"
                    "                 [--marker-kill] [--exec-namespaces [--exec-tmpfs DIR,... [--exec-tmpfs-size BYTES]]\n"
                    "                 [--exec-user UID:GID]]\n"
                    "                 [--egress-virtio-name NAME | --egress-port PATH] [--egress-listen IPV4:PORT]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *port = NULL, *virtio_name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stdio") == 0) stdio_mode = 1;
        else if (strcmp(argv[i], "--init") == 0) init_mode = 1;
        else if (strcmp(argv[i], "--no-cgroup") == 0) no_cgroup = 1;
        else if (strcmp(argv[i], "--marker-kill") == 0) marker_kill = 1;
        else if (strcmp(argv[i], "--exec-namespaces") == 0) exec_namespaces = 1;
        else if (strcmp(argv[i], "--exec-tmpfs") == 0 && i + 1 < argc) {
            for (char *save = NULL, *dir = strtok_r(argv[++i], ",", &save); dir; dir = strtok_r(NULL, ",", &save)) {
                if (dir[0] != '/' || exec_tmpfs_count >= MAX_EXEC_TMPFS) usage();
                exec_tmpfs[exec_tmpfs_count++] = dir;
            }
        } else if (strcmp(argv[i], "--exec-tmpfs-size") == 0 && i + 1 < argc) {
            char *end = NULL;
            errno = 0;
            unsigned long long size = strtoull(argv[++i], &end, 10);
            if (errno || !end || *end || argv[i][0] < '1' || argv[i][0] > '9' || size > EXEC_TMPFS_SIZE_MAX) usage();
            snprintf(exec_tmpfs_options, sizeof exec_tmpfs_options, "mode=1777,size=%llu", size);
            exec_tmpfs_sized = 1;
        } else if (strcmp(argv[i], "--exec-user") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%ld:%ld", &exec_uid, &exec_gid) != 2 || exec_uid < 0 || exec_gid < 0
                || exec_uid > 0xfffffffeL || exec_gid > 0xfffffffeL)
                usage();
        }
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) port = argv[++i];
        else if (strcmp(argv[i], "--virtio-name") == 0 && i + 1 < argc) virtio_name = argv[++i];
        else if (strcmp(argv[i], "--egress-virtio-name") == 0 && i + 1 < argc) egress_virtio_name = argv[++i];
        else if (strcmp(argv[i], "--egress-port") == 0 && i + 1 < argc) egress_port_path = argv[++i];
        else if (strcmp(argv[i], "--egress-listen") == 0 && i + 1 < argc) egress_listen = argv[++i];
        else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%ld:%ld", &run_uid, &run_gid) != 2 || run_uid < 1 || run_gid < 1) usage();
        } else if (strcmp(argv[i], "--pids-max") == 0 && i + 1 < argc) {
            pids_max = strtol(argv[++i], NULL, 10);
            if (pids_max < 8) usage();
        }
        else usage();
    }
    if (stdio_mode == (port != NULL || virtio_name != NULL) || (port && virtio_name)) usage();
    if (egress_virtio_name && egress_port_path) usage();
    if ((exec_tmpfs_count > 0 || exec_uid >= 0) && !exec_namespaces) usage();
    if (exec_tmpfs_sized && exec_tmpfs_count == 0) usage();
    init_marker_prefix();
    if (egress_virtio_name || egress_port_path) egress_due = 0; /* started by the loop below */
    agent_pid = getpid();
    pid1 = init_mode || agent_pid == 1;
    /* the guest's own system only with --init: PID 1 of a namespace (unshare --pid, a container) shares the
       host's or the engine's mounts, hostname and network, which are not the agent's to change */
    if (init_mode) init_system();
    umask(0); /* modes the host names are the modes files get; children get 022 */
    signal(SIGPIPE, SIG_IGN);
    sigset_t wake_signals; /* a child ended; the host opened the port (SIGIO) */
    sigemptyset(&wake_signals);
    sigaddset(&wake_signals, SIGCHLD);
    sigaddset(&wake_signals, SIGIO);
    sigprocmask(SIG_BLOCK, &wake_signals, NULL);
    int sig_fd = signalfd(-1, &wake_signals, SFD_NONBLOCK | SFD_CLOEXEC);
    if (!pid1) prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of our execs come back to us to be reaped */
    if (!no_cgroup) init_cgroups();

    if (stdio_mode) {
        in_fd = 0;
        out_fd = 1;
        struct stat host_end;
        splice_to_host = fstat(out_fd, &host_end) == 0 && S_ISFIFO(host_end.st_mode);
        /* a bigger pipe to the host, best effort: fewer wake-ups of both ends per byte of bulk output */
        if (splice_to_host) fcntl(out_fd, F_SETPIPE_SZ, HOST_PIPE_SIZE);
    } else {
        for (int tries = 0; tries < 200 && in_fd < 0; tries++) { /* device nodes may appear late */
            in_fd = port ? open(port, O_RDWR | O_CLOEXEC | O_NOCTTY) : open_virtio_name(virtio_name);
            if (in_fd < 0) usleep(50 * 1000);
        }
        if (in_fd < 0) {
            logf_("cannot open %s: %s", port ? port : virtio_name, strerror(errno));
            if (pid1) for (;;) pause(); /* PID 1 must not exit */
            return 1;
        }
        out_fd = in_fd;
        fcntl(in_fd, F_SETOWN, getpid());
    }
    logf_("ready (%s%s)", pid1 ? "pid 1, " : "", exec_namespaces ? "per-exec namespaces" : cgroup_base[0] ? "cgroup kill"
          : marker_kill ? "marker kill" : "process-group kill");

    struct pollfd pfds[2 + MAX_EXECS * 3];
    struct exec *owner[2 + MAX_EXECS * 3];
    int which[2 + MAX_EXECS * 3];
    for (;;) {
        int n = 0;
        if (sig_fd >= 0) { pfds[n] = (struct pollfd){.fd = sig_fd, .events = POLLIN}; owner[n++] = NULL; }
        int port_index = -1;
        if (!port_down) {
            port_index = n;
            pfds[n] = (struct pollfd){.fd = in_fd, .events = POLLIN};
            owner[n++] = NULL;
        }
        for (int i = 0; i < MAX_EXECS; i++) {
            struct exec *e = &execs[i];
            if (!e->used) continue;
            for (int s = 1; s <= 2; s++)
                if (e->out[s] >= 0 && e->credit[s] > 0) {
                    pfds[n] = (struct pollfd){.fd = e->out[s], .events = POLLIN};
                    owner[n] = e;
                    which[n++] = s;
                }
            if (e->in >= 0 && e->in_len > 0) {
                pfds[n] = (struct pollfd){.fd = e->in, .events = POLLOUT};
                owner[n] = e;
                which[n++] = 0;
            }
        }
        egress_start();
        /* an exited exec waits only for the host's credit, which arrives on the port: no timeout needed */
        int timeout = egress_poll_timeout();
        if (port_down && (timeout < 0 || timeout > RECONNECT_POLL_MS)) timeout = RECONNECT_POLL_MS;
        int ready = poll(pfds, (nfds_t) n, lease_poll_timeout(timeout));
        if (ready < 0 && errno != EINTR) { logf_("poll: %s", strerror(errno)); sleep(1); }
        lease_check();
        if (port_down && monotonic_ms() - port_down_since >= RECONNECT_POLL_MS) port_down = 0; /* try again */
        /* children are reaped when one ended (SIGCHLD, which stays pending until read), not on every wake-up:
           a stream of output wakes the loop once per chunk */
        int child_ended = sig_fd < 0;
        if (sig_fd >= 0 && (pfds[0].revents & POLLIN)) {
            struct signalfd_siginfo info;
            while (read(sig_fd, &info, sizeof info) > 0) {
                if (info.ssi_signo == SIGIO) port_down = 0; /* the host opened the port: try it now */
                if (info.ssi_signo == SIGCHLD) child_ended = 1;
            }
        }
        if (child_ended) reap();
        for (int i = 0; i < n && ready > 0; i++) {
            if (!pfds[i].revents || !owner[i] || !owner[i]->used) continue;
            if (which[i] == 0) pump_in(owner[i]);
            else pump_out(owner[i], which[i]);
        }
        if (port_index >= 0 && ready > 0 && pfds[port_index].revents) {
            if (pfds[port_index].revents & POLLIN) read_port();
            else if (pfds[port_index].revents & (POLLHUP | POLLERR)) {
                if (stdio_mode) { end_session(); return 0; }
                if (session) logf_("host side of the port is closed");
                mark_port_down();
            }
        }
        if (sig_fd < 0) reap();
        for (int i = 0; i < MAX_EXECS; i++)
            if (execs[i].used && execs[i].exited) try_finish(&execs[i]);
    }
}
