// The one first-in first-out queue of the per-event path: a ring buffer that grows and shrinks.

/** The smallest capacity (a power of two); a buffer never shrinks below it. */
const MIN_CAPACITY = 16;

/**
 * An unbounded first-in first-out queue on a circular array (the listeners' notification buffers,
 * the work queue's FIFO and the DeltaFIFO's key order). `push` and `shift` are O(1) and allocate
 * nothing in the steady state; the array doubles when full and halves when a quarter full (never
 * below 16 slots), so a backlog's memory is given back once it drained. A taken slot is cleared at
 * once, so the buffer never keeps a taken item alive.
 */
export class RingBuffer<T> {
  #slots: (T | undefined)[] = emptySlots(MIN_CAPACITY);
  /** `#slots.length - 1` (the capacity is a power of two). */
  #mask = MIN_CAPACITY - 1;
  /** The slot of the oldest item. */
  #head = 0;
  #length = 0;

  /** How many items are queued. */
  get length(): number {
    return this.#length;
  }

  /** Appends `item` at the tail. */
  push(item: T): void {
    if (this.#length === this.#slots.length) this.#resize(this.#slots.length * 2);
    this.#slots[(this.#head + this.#length) & this.#mask] = item;
    this.#length++;
  }

  /** Removes and returns the oldest item; `undefined` when the buffer is empty. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const head = this.#head;
    const item = this.#slots[head];
    this.#slots[head] = undefined;
    this.#head = (head + 1) & this.#mask;
    this.#length--;
    const capacity = this.#slots.length;
    if (capacity > MIN_CAPACITY && this.#length <= capacity >>> 2) this.#resize(capacity >>> 1);
    return item;
  }

  /** The oldest item without removing it; `undefined` when the buffer is empty. */
  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#slots[this.#head];
  }

  /** Drops every item (and the memory a backlog took). */
  clear(): void {
    this.#slots = emptySlots(MIN_CAPACITY);
    this.#mask = MIN_CAPACITY - 1;
    this.#head = 0;
    this.#length = 0;
  }

  /** The items, oldest first, in a fresh array. */
  toArray(): T[] {
    const out = new Array<T>(this.#length);
    for (let i = 0; i < this.#length; i++) out[i] = this.#slots[(this.#head + i) & this.#mask] as T;
    return out;
  }

  /** Moves the items, oldest first, to the start of a new array of `capacity` slots. */
  #resize(capacity: number): void {
    const slots = emptySlots<T>(capacity);
    for (let i = 0; i < this.#length; i++) slots[i] = this.#slots[(this.#head + i) & this.#mask];
    this.#slots = slots;
    this.#mask = capacity - 1;
    this.#head = 0;
  }
}

/** An array of `n` `undefined`s, built by `push` so that V8 keeps it packed (no holes to check). */
function emptySlots<T>(n: number): (T | undefined)[] {
  const slots: (T | undefined)[] = [];
  for (let i = 0; i < n; i++) slots.push(undefined);
  return slots;
}
