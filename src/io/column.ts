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
