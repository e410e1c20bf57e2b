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
  #slots: (T | undefined)[] = emptySlots();
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
    this.#slots = emptySlots();
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

  /** Moves the items, oldest first, to the start of a new array of `capacity` slots (at most twice the old). */
  #resize(capacity: number): void {
    const old = this.#slots;
    // Built by native copies, not a loop over every slot: V8 keeps the array packed (no holes to check),
    // and a loop of `capacity` pushes ran cold in the interpreter — 30 ms of a 50 000-object first list's
    // notifications (bench/notes.md, issue 29, sixth session).
    const slots = capacity <= old.length ? old.slice(0, capacity) : old.concat(old.slice(0, capacity - old.length));
    slots.fill(undefined);
    for (let i = 0; i < this.#length; i++) slots[i] = old[(this.#head + i) & this.#mask];
    this.#slots = slots;
    this.#mask = capacity - 1;
    this.#head = 0;
  }
}

/** The `MIN_CAPACITY` slots of an empty buffer, built by `push` so that V8 keeps the array packed. */
function emptySlots<T>(): (T | undefined)[] {
  const slots: (T | undefined)[] = [];
  for (let i = 0; i < MIN_CAPACITY; i++) slots.push(undefined);
  return slots;
}
