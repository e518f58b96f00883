// Shards and replicas of the indices Quarry creates on OpenSearch / Elasticsearch. Unset replicas
// use the engines' own auto_expand_replicas "0-1": one replica where there is a second data node to
// hold it, none on a single node (which would otherwise stay yellow forever), and the engine keeps
// that true as nodes join and leave, which a count measured once at creation would not.
export function replicationSettings(replicas: number | undefined, shards = 1): Record<string, unknown> {
  return {
    number_of_shards: shards,
    ...(replicas === undefined ? { auto_expand_replicas: "0-1" } : { number_of_replicas: replicas, auto_expand_replicas: false }),
  };
}
