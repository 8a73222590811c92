/** Time, behind a seam so tests can place calls on either side of a weekly reset. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
