// The index service's public face: what app/, cli/, bench/, eval/ and test/ may use (the import
// rules in .dependency-cruiser.cjs allow nothing else of this folder outside it, but ./lab.ts, the
// engine internals bench/ and eval/ study, and ./testing/).
export { assembleIndex, openStores } from "./main.ts";
export { indexConfig } from "./config.ts";
export type { SearchEngine } from "./search/search-engine.ts";
export { SqliteCatalog } from "./sqlite/sqlite-catalog.ts";
export { deleteOpenSearchNamespace } from "./opensearch/opensearch-namespace.ts";
export { deleteElasticsearchNamespace } from "./elasticsearch/elasticsearch-namespace.ts";
// The embedded store, opened directly by the embedded doctor (app/embedded-doctor.ts).
export { openDatabase, openReadOnlyDatabase, type SqliteDatabase } from "./sqlite/open-database.ts";
export { SqliteSearchEngine } from "./sqlite/sqlite-search-engine.ts";
export { DEFAULT_READ_THREADS } from "./sqlite/read-threads.ts";
export { keywordIndexSize } from "./sqlite/space-tables.ts";
