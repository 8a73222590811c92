import type { Readable } from 'node:stream';

/** Where one demultiplexed stream's bytes go (OutputCapture). */
export interface ByteSink {
  take(chunk: Buffer): void;
}

/**
 * Splits Docker's multiplexed attach stream (8-byte header: stream type, 3 zero bytes, big-endian
 * payload length; then the payload) into stdout and stderr, handing the sinks views of the
 * socket's own chunks.
 *
 * Why not docker-modem's demuxStream: it concatenates every chunk onto its buffer and copies the
 * rest of the buffer after every frame, so a run that prints without end made the service churn
 * through several times its output in short-lived Buffers. Not a leak (heap and external memory
 * fell back after a GC, and a second flood did not raise RSS further), but on Node 24 more of
 * that garbage lives between scavenges and freed pages go back to the OS later, so the
 * service's RSS rose past the test's 64 MiB bound during a flood (issue 17: 133696 KiB on a
 * quiet machine, 69916 KiB on a loaded one; under the bound with this demuxer). Here nothing is
 * allocated per frame but a view, and the sinks copy only the bytes they keep.
 */
export function demuxDockerStream(stream: Readable, stdout: ByteSink, stderr: ByteSink): void {
  const header = Buffer.alloc(8);
  let headerFill = 0;
  let remaining = 0;
  let target: ByteSink | undefined;
  let raw = false;
  stream.on('data', (chunk: Buffer) => {
    if (raw) return stdout.take(chunk);
    let i = 0;
    while (i < chunk.length) {
      if (remaining === 0) {
        const n = Math.min(8 - headerFill, chunk.length - i);
        chunk.copy(header, headerFill, i, i + n);
        headerFill += n;
        i += n;
        if (headerFill < 8) return;
        headerFill = 0;
        const type = header[0];
        if (type !== 0 && type !== 1 && type !== 2) {
          // Not multiplexed after all (a TTY stream): everything from here on is stdout.
          raw = true;
          stdout.take(Buffer.from(header));
          if (i < chunk.length) stdout.take(chunk.subarray(i));
          return;
        }
        remaining = header.readUInt32BE(4);
        // Type 0 (stdin echo) is never requested; its bytes are skipped.
        target = type === 1 ? stdout : type === 2 ? stderr : undefined;
        continue;
      }
      const n = Math.min(remaining, chunk.length - i);
      target?.take(chunk.subarray(i, i + n));
      remaining -= n;
      i += n;
    }
  });
}
