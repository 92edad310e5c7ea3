package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Where the ranks meet: rank 0's address and port (torch's MASTER_ADDR, MASTER_PORT). Port 0 until chosen: without a
 * {@code --rdzv-endpoint} a free local port is taken right before the ranks start, so that it is still free then.
 */
record Rendezvous(String addr, int port) {
    /** {@code --rdzv-endpoint HOST:PORT}, or this host and a port yet to choose when {@code endpoint} is null. */
    static Rendezvous of(String endpoint) {
        return endpoint == null ? new Rendezvous("127.0.0.1", 0) : new Rendezvous(host(endpoint), port(endpoint));
    }

    /** This rendezvous with its port chosen: the given one, else a free local port. */
    Rendezvous chosen() {
        return port != 0 ? this : new Rendezvous(addr, freePort());
    }

    /** The host of a {@code --rdzv-endpoint HOST:PORT}. */
    private static String host(String endpoint) {
        int c = endpoint.lastIndexOf(':');
        if (c <= 0 || c == endpoint.length() - 1) {
            throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': expected HOST:PORT");
        }
        return endpoint.substring(0, c);
    }

    /** The port of a {@code --rdzv-endpoint HOST:PORT} (its host checked first, by {@link #host}). */
    private static int port(String endpoint) {
        int port;
        try {
            port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
        } catch (NumberFormatException e) {
            throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': port is not a number");
        }
        if (port < 1 || port > 65535) {
            throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': port must be in 1..65535");
        }
        return port;
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new PathproofException(ExitCode.PORT_IN_USE, "run: no free local port: " + e.getMessage());
        }
    }

    /** Whether rank 0 could bind the port now (on loopback for a local address, else on every interface). */
    boolean canBind() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            String bindTo = addr.equals("localhost") || addr.startsWith("127.") ? addr : "0.0.0.0";
            s.bind(new InetSocketAddress(bindTo, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
