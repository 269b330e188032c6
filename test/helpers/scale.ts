/**
 * The one setting that scales every property run and every loop over random seeds: SWC_PROPERTY_SCALE. Unset, it is
 * 0.1, the development loop `npm test` runs; `npm run test:e2e` (and so CI) sets 1, the full strength the numbers in
 * the tests are written for; `SWC_PROPERTY_SCALE=20 npx jest test/differential` runs twenty times those.
 */
const DEFAULT_SCALE = 0.1;

/** A property checked fewer times than this says little; a smaller scale still runs this many. */
const FEWEST_RUNS = 10;

/** The scale read from SWC_PROPERTY_SCALE (a positive number), or the default when it is unset or not one. */
function readScale(): number {
  const scale = Number(process.env.SWC_PROPERTY_SCALE ?? DEFAULT_SCALE);
  return Number.isFinite(scale) && scale > 0 ? scale : DEFAULT_SCALE;
}

export const PROPERTY_SCALE = readScale();

/**
 * Cases for a property (fast-check's `numRuns`, or random seeds) written as n at full strength.
 * @param n - the cases at scale 1
 * @returns n times the scale, rounded up, and never fewer than 10 (nor than n, when n is smaller than that)
 */
export function scaled(n: number): number {
  return Math.max(Math.min(n, FEWEST_RUNS), Math.ceil(n * PROPERTY_SCALE));
}

/**
 * A time limit for a test whose cases scale: never less than the one written for scale 1.
 * @param ms - the limit at scale 1
 * @returns the limit at the scale, when larger
 */
export function scaledTimeout(ms: number): number {
  return Math.ceil(ms * Math.max(1, PROPERTY_SCALE));
}

/**
 * How many of a property's cases must show something (that the cases were not vacuous), scaled as the cases are.
 * Fewer cases spread wider about their share (a check of 300 in 600 random cases, scaled to 60, saw exactly 30 and
 * failed): below full strength the count leaves two standard deviations of a binomial count (at most `2√runs`), so it
 * still refuses cases that show nothing but never fails by chance.
 * @param n - the count at full strength
 * @param full - the cases at full strength (what is given to `scaled`)
 * @returns the same share of `scaled(full)`, rounded down, less that slack below full strength
 */
export function scaledCount(n: number, full: number): number {
  const runs = scaled(full);
  const share = (n * runs) / full;
  return runs >= full ? Math.floor(share) : Math.max(0, Math.floor(share - 2 * Math.sqrt(runs)));
}
