import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Bytes NATS has delivered to a process that it has not read yet (the receive queues of its
 * sockets to the NATS server, as `ss` shows them). A test that freezes a service with SIGSTOP
 * learns from it that a request reached that process: the message waits unread in its socket.
 */
export async function unreadFromNats(pid: number, natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'): Promise<number> {
  const port = new URL(natsUrl).port || '4222';
  const { stdout } = await exec('ss', ['-tnpH', 'state', 'established', `( dport = :${port} )`]);
  let unread = 0;
  for (const line of stdout.split('\n')) {
    // Recv-Q Send-Q Local Peer users:(("node",pid=123,fd=21)); a socket may be shared by several processes.
    const m = /^\s*(\d+)\s+\d+\s.*users:\((.*)\)\s*$/.exec(line);
    if (m && new RegExp(`pid=${pid},`).test(m[2]!)) unread += Number(m[1]);
  }
  return unread;
}
