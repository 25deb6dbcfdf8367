/** A first-in first-out list of serialized events bounded in count and in characters: the oldest go first. */
export class BoundedLog {
  private items: string[] = [];
  private head = 0;
  /** The characters of the lines held. */
  chars = 0;
  /** Lines pushed out, oldest first, to keep within the bounds. */
  evicted = 0;

  constructor(
    readonly maxLines: number,
    readonly maxChars: number,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds `line`, evicting the oldest lines beyond the bounds (`line` itself too, when it alone is over). */
  push(line: string): void {
    this.items.push(line);
    this.chars += line.length;
    while (this.length > 0 && (this.length > this.maxLines || this.chars > this.maxChars)) {
      this.chars -= this.items[this.head]!.length;
      this.head++;
      this.evicted++;
    }
    this.compact();
  }

  /** Removes and returns the oldest lines: at most `maxLines`, and past the first, at most `maxChars` in all. */
  take(maxLines: number, maxChars: number): string[] {
    const taken: string[] = [];
    let chars = 0;
    while (this.length > 0 && taken.length < maxLines) {
      const line = this.items[this.head]!;
      if (taken.length > 0 && chars + line.length > maxChars) break;
      taken.push(line);
      chars += line.length;
      this.head++;
    }
    this.chars -= chars;
    this.compact();
    return taken;
  }

  /** The lines held, oldest first. */
  snapshot(): string[] {
    return this.items.slice(this.head);
  }

  /** Drops the consumed front of the array once it is most of it (amortised O(1) per line). */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
