/** Writing pruned results, on the real transcripts past BIG_FILE (the rest: test/formats/prune-write.test.ts). */
import { describePruneWrites } from '../helpers/prune-write.js';

await describePruneWrites(true);
