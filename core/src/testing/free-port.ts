/** A TCP port for tests that need one nothing listens on: a refused connection, or a server to start. */
import { createServer } from "node:net";

/**
 * A port of 127.0.0.1 that nothing listens on now (the system's choice, closed again at once).
 * Another process may take it later: start what needs it soon, or retry on "address in use".
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
