// Display formatting shared by every page: sizes, durations, times, counts.

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

// 0 → "0 B", 1536 → "1.5 KiB", 10 * 2^20 → "10 MiB". Three significant digits at most.
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '–';
  const negative = bytes < 0;
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  let text: string;
  if (unit === 0) text = String(Math.round(value));
  else if (value >= 100) text = value.toFixed(0);
  else if (value >= 10) text = trimZeros(value.toFixed(1));
  else text = trimZeros(value.toFixed(2));
  return `${negative ? '-' : ''}${text} ${BYTE_UNITS[unit]}`;
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

// 1234567 → "1,234,567" (locale-independent so tests and screenshots agree).
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  const sign = n < 0 ? '-' : '';
  const whole = Math.trunc(Math.abs(n)).toString();
  return sign + whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// Seconds as the largest unit and the one below it: 45 → "45 s", 3725 → "1 h 2 min",
// 90061 → "1 d 1 h", 86405 → "1 d" (the seconds are below the shown precision).
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const sign = seconds < 0 ? '-' : '';
  const s = Math.floor(Math.abs(seconds));
  const units: Array<[string, number]> = [
    ['d', 86400],
    ['h', 3600],
    ['min', 60],
    ['s', 1],
  ];
  const first = units.findIndex(([, size]) => s >= size);
  if (first < 0) return `${sign}0 s`;
  const [bigName, bigSize] = units[first];
  const big = Math.floor(s / bigSize);
  let text = `${big} ${bigName}`;
  if (first + 1 < units.length) {
    const [smallName, smallSize] = units[first + 1];
    const small = Math.floor((s - big * bigSize) / smallSize);
    if (small > 0) text += ` ${small} ${smallName}`;
  }
  return sign + text;
}

// Milliseconds, for latencies and lags under a few seconds: 0.42 → "0.42 ms", 1500 → "1.5 s".
export function formatMillis(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (Math.abs(ms) < 1) return `${trimZeros(ms.toFixed(2))} ms`;
  if (Math.abs(ms) < 1000) return `${trimZeros(ms.toFixed(ms < 10 ? 1 : 0))} ms`;
  if (Math.abs(ms) < 60000) return `${trimZeros((ms / 1000).toFixed(ms < 10000 ? 2 : 1))} s`;
  return formatDuration(ms / 1000);
}

// An instant as "2024-05-01 12:34:56 UTC" (ISO-like, UTC, no locale surprises).
export function formatTime(ms: number | string | null | undefined): string {
  if (ms === null || ms === undefined || ms === '') return '–';
  const date = typeof ms === 'number' ? new Date(ms) : new Date(ms);
  if (Number.isNaN(date.getTime())) return String(ms);
  return date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

// How long ago an instant was, relative to `now`: "5 min ago".
export function formatAgo(ms: number, now: number = Date.now()): string {
  const seconds = (now - ms) / 1000;
  if (seconds < 0) return `in ${formatDuration(-seconds)}`;
  return `${formatDuration(seconds)} ago`;
}

// A rate per second with a sensible number of digits.
export function formatRate(perSecond: number | null | undefined): string {
  if (perSecond === null || perSecond === undefined || !Number.isFinite(perSecond)) return '–';
  if (perSecond === 0) return '0/s';
  if (perSecond < 10) return `${trimZeros(perSecond.toFixed(2))}/s`;
  return `${Math.round(perSecond)}/s`;
}
