import { inflateSync } from "node:zlib";

// A minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what Chromium's screenshots are),
// so a test can look at the pixels of a screenshot without an image library.

export interface Image {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  pixels: Uint8Array;
}

export function decodePng(buf: Buffer): Image {
  if (buf.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a") throw new Error("not a PNG");
  let pos = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString("latin1", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error("only 8-bit non-interlaced PNGs");
      colorType = data[9] as number;
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    pos += 12 + len;
  }
  const channels = colorType === 6 ? 4 : colorType === 2 ? 3 : 0;
  if (!channels) throw new Error(`unsupported PNG colour type ${colorType}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? (cur[i - channels] as number) : 0;
      const b = prev[i] as number;
      const c = i >= channels ? (prev[i - channels] as number) : 0;
      const x = line[i] as number;
      cur[i] = (x + unfilter(filter, a, b, c)) & 0xff;
    }
    for (let px = 0; px < width; px++) {
      for (let k = 0; k < 3; k++) out[(y * width + px) * 4 + k] = cur[px * channels + k] as number;
      out[(y * width + px) * 4 + 3] = channels === 4 ? (cur[px * channels + 3] as number) : 255;
    }
    prev = cur;
  }
  return { width, height, pixels: out };
}

function unfilter(filter: number, a: number, b: number, c: number): number {
  switch (filter) {
    case 0:
      return 0;
    case 1:
      return a;
    case 2:
      return b;
    case 3:
      return Math.floor((a + b) / 2);
    case 4: {
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    default:
      throw new Error(`bad PNG filter ${filter}`);
  }
}

/** How the picture varies: the luminance variance and how many distinct colours it has. */
export function pixelStats(img: Image): { variance: number; colours: number } {
  let sum = 0;
  let sq = 0;
  const colours = new Set<number>();
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    const r = img.pixels[i * 4] as number;
    const g = img.pixels[i * 4 + 1] as number;
    const b = img.pixels[i * 4 + 2] as number;
    const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    sum += l;
    sq += l * l;
    if (colours.size < 5000) colours.add((r << 16) | (g << 8) | b);
  }
  const mean = sum / n;
  return { variance: sq / n - mean * mean, colours: colours.size };
}

/** The share of pixels of one colour (roughly: each channel within `tolerance`). */
export function shareOf(img: Image, rgb: [number, number, number], tolerance = 12): number {
  let hits = 0;
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    if (
      Math.abs((img.pixels[i * 4] as number) - rgb[0]) <= tolerance &&
      Math.abs((img.pixels[i * 4 + 1] as number) - rgb[1]) <= tolerance &&
      Math.abs((img.pixels[i * 4 + 2] as number) - rgb[2]) <= tolerance
    )
      hits++;
  }
  return hits / n;
}
