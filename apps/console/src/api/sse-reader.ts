import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * Reads a text/event-stream body event by event. EventSource cannot send an Authorization
 * header, and the key must never ride in a URL, so streams are read from fetch.
 */
export async function readEvents(res: Response, onEvent: (e: EventSourceMessage) => void): Promise<void> {
  if (!res.body) return;
  const parser = createParser({ onEvent });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
}
