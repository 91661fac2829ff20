// A model's external data packed for transfer (`model.onnx_data.packed`, made at
// preparation by py_runtime/devtools/models/packed.py, whose docstring has the layout):
// unpacked as it arrives, band by band, into the bytes of `model.onnx_data`, exactly.

const MAGIC = 'PAPIPK01';
const BLOCK = 32;

const F16 = new Float32Array(1);
const F16_BITS = new Uint32Array(F16.buffer);

/** A float16's value (every finite one is exact in float32). */
function half(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) {
    F16_BITS[0] = ((bits & 0x8000) << 16) | 0x7f800000 | (mantissa << 13);
    return F16[0];
  }
  return sign * (1024 + mantissa) * 2 ** (exponent - 25);
}

/** Every float16's value, by its bits (made at the first unpacking). */
let halves = null;
function halfTable() {
  halves ??= Float32Array.from({ length: 65536 }, (_, bits) => half(bits));
  return halves;
}

/** Reads exact byte counts from a stream of chunks. */
class Bytes {
  /** @param {() => Promise<Uint8Array | null>} next the next chunk, null at the end */
  constructor(next) {
    this.next = next;
    /** @type {Uint8Array[]} */
    this.chunks = [];
    this.held = 0;
  }

  /** The next `count` bytes; an Error if the stream ends first. */
  async take(count) {
    while (this.held < count) {
      const chunk = await this.next();
      if (!chunk) throw new Error(`the packed file ended ${count - this.held} bytes early`);
      this.chunks.push(chunk);
      this.held += chunk.length;
    }
    const out = new Uint8Array(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.chunks[0];
      const used = Math.min(chunk.length, count - filled);
      out.set(chunk.subarray(0, used), filled);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    this.held -= count;
    return out;
  }

  /** Whether anything is left. */
  async atEnd() {
    if (this.held) return false;
    const chunk = await this.next();
    if (!chunk) return true;
    this.chunks.push(chunk);
    this.held += chunk.length;
    return false;
  }
}

/**
 * 32 rows of a q4_1 segment: `w = q * d + m`, each step rounded to float32. `q * d` is
 * exact (4 bits by a float16's 11), and a sum of two float32s computed as a double and
 * rounded once to float32 (the store) is float32's own sum.
 */
function q41Band(bytes, cols) {
  const table = halfTable();
  const d = new Float32Array(cols);
  const m = new Float32Array(cols);
  for (let col = 0; col < cols; col++) {
    d[col] = table[bytes[2 * col] | (bytes[2 * col + 1] << 8)];
    m[col] = table[bytes[2 * (cols + col)] | (bytes[2 * (cols + col) + 1] << 8)];
  }
  const nibbles = bytes.subarray(4 * cols);
  const out = new Float32Array(BLOCK * cols);
  const half_cols = cols / 2;
  for (let row = 0; row < BLOCK; row++) {
    const from = row * half_cols;
    const to = row * cols;
    for (let pair = 0; pair < half_cols; pair++) {
      const byte = nibbles[from + pair];
      const col = 2 * pair;
      out[to + col] = (byte & 15) * d[col] + m[col];
      out[to + col + 1] = (byte >> 4) * d[col + 1] + m[col + 1];
    }
  }
  return new Uint8Array(out.buffer);
}

/** Rows of a q8_0 segment, one after another: `w = q * d`. */
function q80Rows(bytes, cols) {
  const blocks = cols / BLOCK;
  const stride = 2 * blocks + cols;
  const rows = bytes.length / stride;
  const table = halfTable();
  const q = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Float32Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    const at = row * stride;
    const values = at + 2 * blocks - row * cols; // q[values + i] is the row's i-th
    for (let block = 0; block < blocks; block++) {
      const d = table[bytes[at + 2 * block] | (bytes[at + 2 * block + 1] << 8)];
      for (let i = row * cols + block * BLOCK, end = i + BLOCK; i < end; i++) out[i] = q[values + i] * d;
    }
  }
  return new Uint8Array(out.buffer);
}

/** The int8 values (`values`) or the float16 scales of rows of a q8_0 segment. */
function q80Part(bytes, cols, values) {
  const scales = 2 * (cols / BLOCK);
  const stride = scales + cols;
  const rows = bytes.length / stride;
  const width = values ? cols : scales;
  const out = new Uint8Array(rows * width);
  for (let row = 0; row < rows; row++) {
    const at = row * stride + (values ? scales : 0);
    out.set(bytes.subarray(at, at + width), row * width);
  }
  return out;
}

/** The bytes of the [cols, rows] transpose of `matrix`, [rows, cols] float32, turned in tiles. */
function transposed(matrix, rows, cols) {
  const out = new Float32Array(rows * cols);
  const TILE = 32;
  for (let top = 0; top < rows; top += TILE) {
    const bottom = Math.min(rows, top + TILE);
    for (let left = 0; left < cols; left += TILE) {
      const right = Math.min(cols, left + TILE);
      for (let row = top; row < bottom; row++) {
        for (let col = left; col < right; col++) out[col * rows + row] = matrix[row * cols + col];
      }
    }
  }
  return new Uint8Array(out.buffer);
}

/**
 * The unpacked bytes of a packed file read by `next` (its chunks, null at the end):
 * `{size, chunks}`, the unpacked size and an async iterator of its bytes in order.
 * A malformed file is an Error naming what is wrong.
 * @param {() => Promise<Uint8Array | null>} next
 */
export async function unpack(next) {
  const input = new Bytes(next);
  const magic = new TextDecoder().decode(await input.take(MAGIC.length));
  if (magic !== MAGIC) throw new Error('not a packed model file');
  const length = new DataView((await input.take(4)).buffer).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(await input.take(length)));
  // The q8_0 segments' bytes, where a later segment is their values or scales again.
  const keep = header.segments.some((s) => s.kind === 'q8_0_values' || s.kind === 'q8_0_scales');
  /** @type {{bytes: Uint8Array, cols: number}[]} */
  const kept = [];
  async function* chunks() {
    let produced = 0;
    for (const segment of header.segments) {
      if (segment.kind === 'raw') {
        for (let left = segment.length; left > 0;) {
          const piece = await input.take(Math.min(left, 1 << 20));
          left -= piece.length;
          produced += piece.length;
          yield piece;
        }
      } else if (segment.kind === 'q4_1') {
        for (let band = 0; band < segment.rows / BLOCK; band++) {
          const out = q41Band(await input.take(4 * segment.cols + (BLOCK * segment.cols) / 2), segment.cols);
          produced += out.length;
          yield out;
        }
      } else if (segment.kind === 'q8_0') {
        const stride = 2 * (segment.cols / BLOCK) + segment.cols;
        for (let row = 0; row < segment.rows; row += 256) {
          const count = Math.min(256, segment.rows - row);
          const bytes = await input.take(count * stride);
          if (keep) kept.push({ bytes, cols: segment.cols });
          const out = q80Rows(bytes, segment.cols);
          produced += out.length;
          yield out;
        }
      } else if (segment.kind === 'q8_0_t') {
        // The transpose of a [cols, rows] weight: its rows all read before it is turned.
        const bytes = await input.take(segment.rows * (2 * (segment.cols / BLOCK) + segment.cols));
        if (keep) kept.push({ bytes, cols: segment.cols });
        const out = transposed(new Float32Array(q80Rows(bytes, segment.cols).buffer), segment.rows, segment.cols);
        produced += out.length;
        yield out;
      } else if (segment.kind === 'q8_0_values' || segment.kind === 'q8_0_scales') {
        for (const { bytes, cols } of kept) {
          const out = q80Part(bytes, cols, segment.kind === 'q8_0_values');
          produced += out.length;
          yield out;
        }
      } else {
        throw new Error(`unknown segment kind ${segment.kind}`);
      }
    }
    if (produced !== header.size || !(await input.atEnd())) {
      throw new Error(`the packed file unpacks to ${produced} bytes, not ${header.size}`);
    }
  }
  return { size: Number(header.size), chunks: chunks() };
}
