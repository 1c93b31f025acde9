// Order statistics over measured values, and the shuffled order of each round's cases.

export const percentile = (sorted, p) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
export const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
export function shuffle(items) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
/** (max − min) / median of the finite values: 0 when the rounds agree. */
export const spread = (values) => {
  const finite = values.filter((v) => Number.isFinite(v));
  const mid = median(finite);
  if (finite.length < 2 || !(mid > 0)) return Number.NaN;
  return (Math.max(...finite) - Math.min(...finite)) / mid;
};
