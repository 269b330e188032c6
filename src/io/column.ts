/**
 * A list of whole numbers from 0 to 2^32 - 1 that grows at its end, four bytes each in a typed array: what a big file
 * keeps per line (where it starts and ends in its block) then costs 4 MB a column for a million lines, where an
 * array's elements take 8 bytes and the room it grows into.
 */
export class Uint32Column {
  private data = new Uint32Array(1024);
  length = 0;

  push(value: number): void {
    if (!(value >= 0 && value <= 0xffffffff && Number.isInteger(value)))
      throw new RangeError(`a column holds whole numbers from 0 to 2^32 - 1, not ${value}`);
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  /** Element `k`, for `k` below `length`. */
  at(k: number): number {
    return this.data[k] as number;
  }
}

/**
 * Where each item of a big file starts in its text: whole numbers from 0, four bytes each while they stay below 2^32
 * (a file of 4 GB), eight bytes each from the first that does not. An array took 8 bytes each and the room it grows
 * into (10 MB for a million lines).
 */
export class OffsetColumn {
  private data: Uint32Array | Float64Array = new Uint32Array(1024);
  length = 0;

  push(value: number): void {
    if (!(value >= 0 && Number.isSafeInteger(value)))
      throw new RangeError(`an offset is a whole number of at least 0, not ${value}`);
    if (value > 0xffffffff && this.data instanceof Uint32Array) this.data = Float64Array.from(this.data);
    if (this.length === this.data.length) {
      const grown =
        this.data instanceof Uint32Array ? new Uint32Array(this.length * 2) : new Float64Array(this.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  /** Element `k`, for `k` below `length`. */
  at(k: number): number {
    return this.data[k] as number;
  }
}
