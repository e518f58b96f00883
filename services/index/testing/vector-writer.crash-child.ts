// A writer process for the crash test in sqlite/approximate-knn.crash.test.ts: it writes documents of
// fixture chunks into the embedded store (and deletes every third one it wrote before), searching
// now and then so its in-memory index is live, and saving its index every few changes, until the
// test kills it with SIGKILL wherever it is. It reports each step after it returns.
// Run as: node --import tsx vector-writer.crash-child.ts <db> <knowledge-base>
import { openDatabase } from "../sqlite/open-database.ts";
import { SqliteSearchEngine } from "../sqlite/sqlite-search-engine.ts";
import { FIXTURE_DIMENSION, fixtureDocument, fixtureVector, vectorQuery } from "./vector-fixtures.ts";

const [file, knowledgeBaseId] = process.argv.slice(2);
const engine = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true, vectorIndex: { mode: "hnsw", exactBelow: 0, saveEvery: 40 } });
await engine.ensureKnowledgeBase(knowledgeBaseId, FIXTURE_DIMENSION);
for (let n = 0; ; n++) {
  const documentId = `doc${n}`;
  await engine.replaceDocumentChunks(knowledgeBaseId, documentId, `${documentId}.txt`, fixtureDocument(knowledgeBaseId, documentId, 8));
  process.stdout.write(`wrote ${documentId}\n`);
  if (n % 3 === 2) {
    await engine.deleteDocument(knowledgeBaseId, `doc${n - 2}`);
    process.stdout.write(`deleted doc${n - 2}\n`);
  }
  if (n % 5 === 0) await engine.search(vectorQuery(knowledgeBaseId, fixtureVector(documentId, 0), 3));
}
