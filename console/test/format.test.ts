import { describe, expect, it } from 'vitest';
import { formatAgo, formatBytes, formatCount, formatDuration, formatMillis, formatRate, formatTime } from '../src/format';

describe('formatting', () => {
  it('formats bytes in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1 KiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(10 * 1024 * 1024)).toBe('10 MiB');
    expect(formatBytes(123.4 * 1024 * 1024 * 1024)).toBe('123 GiB');
    expect(formatBytes(5 * 1024 ** 4)).toBe('5 TiB');
    expect(formatBytes(-2048)).toBe('-2 KiB');
    expect(formatBytes(null)).toBe('–');
    expect(formatBytes(NaN)).toBe('–');
  });

  it('formats counts with thousands separators', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(999)).toBe('999');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount(-1000)).toBe('-1,000');
    expect(formatCount(undefined)).toBe('–');
  });

  it('formats durations as the two largest units', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(60)).toBe('1 min');
    expect(formatDuration(3725)).toBe('1 h 2 min');
    expect(formatDuration(90061)).toBe('1 d 1 h');
    expect(formatDuration(86405)).toBe('1 d');
    expect(formatDuration(-90)).toBe('-1 min 30 s');
  });

  it('formats milliseconds for latencies and lags', () => {
    expect(formatMillis(0.42)).toBe('0.42 ms');
    expect(formatMillis(3.25)).toBe('3.3 ms');
    expect(formatMillis(250)).toBe('250 ms');
    expect(formatMillis(1500)).toBe('1.5 s');
    expect(formatMillis(42_000)).toBe('42 s');
    expect(formatMillis(3_600_000)).toBe('1 h');
    expect(formatMillis(null)).toBe('–');
  });

  it('formats times in UTC and relative times', () => {
    expect(formatTime(Date.UTC(2024, 4, 1, 12, 34, 56))).toBe('2024-05-01 12:34:56 UTC');
    expect(formatTime('2024-05-01T12:34:56.789Z')).toBe('2024-05-01 12:34:56 UTC');
    expect(formatTime('Wed, 01 May 2024 12:34:56 GMT')).toBe('2024-05-01 12:34:56 UTC');
    expect(formatTime('garbage')).toBe('garbage');
    expect(formatAgo(0, 125_000)).toBe('2 min 5 s ago');
    expect(formatRate(0)).toBe('0/s');
    expect(formatRate(0.25)).toBe('0.25/s');
    expect(formatRate(123.4)).toBe('123/s');
  });
});
