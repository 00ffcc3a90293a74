package org.sandbox4j.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Turns a host name into addresses for the proxy. The proxy calls this once per request and
 * connects only to an address it returned and checked, so there is no second lookup for DNS to
 * answer differently (no rebinding window). Tests substitute a resolver that maps names to
 * fixture addresses, so no test ever asks real DNS.
 */
@FunctionalInterface
public interface HostResolver {

    /** The JDK's resolver ({@link InetAddress#getAllByName}), with its cache and the host's hosts file. */
    HostResolver SYSTEM = name -> List.of(InetAddress.getAllByName(name));

    /**
     * The addresses of {@code name}, in the order to try them.
     *
     * @throws UnknownHostException when the name does not resolve
     */
    List<InetAddress> resolve(String name) throws UnknownHostException;
}
