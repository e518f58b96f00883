/** quarry_stage_events_total{outcome="handled"} of one process's /metrics, for the stage's own consumer (not index.status). */
export async function handledEvents(url: string, token: string, stage: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${url}/metrics: ${response.status} ${await response.text()}`);
  let total = 0;
  for (const line of (await response.text()).split("\n")) {
    const match = /^quarry_stage_events_total\{([^}]*)\} (\d+(?:\.\d+)?)$/.exec(line);
    if (match && match[1]!.includes('outcome="handled"') && match[1]!.includes(`stage="${stage}"`)) total += Number(match[2]);
  }
  return total;
}
