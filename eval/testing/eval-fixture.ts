// A 20-document BEIR dataset for the harness's own tests: distinct topics, one query per topic
// phrased with the document's words, so a working BM25 must put the right document first.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const FIXTURE_DOCS: { id: string; title: string; text: string }[] = [
  { id: "d01", title: "Honeybee waggle dance", text: "Forager honeybees perform a waggle dance on the comb to tell nestmates the direction and distance of nectar sources relative to the sun." },
  { id: "d02", title: "Volcanic eruptions", text: "Magma rising through the crust releases dissolved gases; when pressure builds faster than it can escape, a volcano erupts explosively and throws out ash and pumice." },
  { id: "d03", title: "Sourdough baking", text: "A sourdough starter is a culture of wild yeast and lactic acid bacteria. Bakers feed it flour and water, and it leavens bread with a tangy flavour." },
  { id: "d04", title: "Plate tectonics", text: "The lithosphere is broken into plates that drift on the asthenosphere; where plates collide, mountain ranges such as the Himalaya are pushed upward." },
  { id: "d05", title: "Photosynthesis", text: "Chloroplasts in leaves capture light energy with chlorophyll and use it to turn carbon dioxide and water into glucose, releasing oxygen." },
  { id: "d06", title: "Lighthouse keepers", text: "Before automation, lighthouse keepers trimmed wicks, wound clockwork lenses and kept the lamp burning through every storm on remote coasts." },
  { id: "d07", title: "Chess openings", text: "The Sicilian Defence answers the king's pawn with the c-pawn, giving Black an asymmetrical position and counterattacking chances on the queenside." },
  { id: "d08", title: "Coral reef bleaching", text: "When ocean water stays too warm, corals expel the symbiotic algae living in their tissue, turn white, and may starve if the heat persists." },
  { id: "d09", title: "Bicycle gears", text: "A derailleur moves the chain between sprockets of different sizes, so a cyclist can keep a comfortable cadence on steep climbs and fast descents." },
  { id: "d10", title: "Vaccines and immunity", text: "A vaccine exposes the immune system to a harmless antigen so that memory B cells and T cells respond quickly to a later infection." },
  { id: "d11", title: "Glacier retreat", text: "Mountain glaciers are shrinking as summer melting outpaces winter snowfall, and meltwater lakes form behind moraines left at the old ice front." },
  { id: "d12", title: "Espresso extraction", text: "An espresso machine forces hot water at about nine bars of pressure through finely ground coffee, extracting oils that form the crema." },
  { id: "d13", title: "Migratory birds", text: "Arctic terns migrate from pole to pole each year, navigating with the Earth's magnetic field, the stars and landmarks along the coastlines." },
  { id: "d14", title: "Roman aqueducts", text: "Roman engineers built aqueducts with a steady gentle gradient, carrying spring water across valleys on stone arches into city fountains and baths." },
  { id: "d15", title: "Black holes", text: "A black hole forms when a massive star collapses; beyond the event horizon gravity is so strong that not even light can escape." },
  { id: "d16", title: "Composting", text: "Microbes in a compost heap break down kitchen scraps and garden waste into humus when the pile has air, moisture and a balance of carbon and nitrogen." },
  { id: "d17", title: "Violin making", text: "Luthiers carve the violin's spruce top and maple back by hand, and the varnish and the position of the sound post shape its tone." },
  { id: "d18", title: "Tides", text: "The Moon's gravity pulls the oceans into two bulges, so most coasts see two high tides and two low tides in a little more than a day." },
  {
    id: "d19",
    title: "Railway signalling",
    // Long on purpose: several chunks, so the best-chunk rule is exercised end to end.
    text: Array.from({ length: 12 }, (_, i) =>
      `Block signalling keeps trains apart: section ${i + 1} of the line may hold only one train at a time, and the signal at its entrance shows red until the train ahead has cleared the block, after which interlocking lets the signaller set the points and clear the signal again.`,
    ).join(" "),
  },
  // Shares its id with query q20 and echoes its words: BEIR ignores a hit whose id is the query's.
  { id: "q20", title: "Tea ceremony", text: "The Japanese tea ceremony prepares powdered matcha green tea with a bamboo whisk in a quiet tea room." },
];

export const FIXTURE_QUERIES: { id: string; text: string; relevant: string }[] = [
  { id: "q01", text: "how do honeybees tell nestmates where nectar is", relevant: "d01" },
  { id: "q02", text: "why does a volcano erupt explosively with ash", relevant: "d02" },
  { id: "q03", text: "sourdough starter wild yeast", relevant: "d03" },
  { id: "q04", text: "colliding plates push up mountain ranges", relevant: "d04" },
  { id: "q05", text: "chlorophyll turns carbon dioxide into glucose", relevant: "d05" },
  { id: "q08", text: "warm water makes corals expel algae", relevant: "d08" },
  { id: "q10", text: "memory B cells after a vaccine", relevant: "d10" },
  { id: "q12", text: "espresso pressure crema", relevant: "d12" },
  { id: "q15", text: "event horizon light cannot escape", relevant: "d15" },
  { id: "q19", text: "block signalling interlocking points", relevant: "d19" },
  // Its only relevant document is d03 (not the id-twin q20): the twin must be ignored, not counted.
  { id: "q20", text: "green tea whisk and bread yeast", relevant: "d03" },
];

/** Writes the fixture as corpus.jsonl, queries.jsonl and qrels/test.tsv under dir. */
export async function writeFixtureDataset(dir: string): Promise<void> {
  await mkdir(join(dir, "qrels"), { recursive: true });
  await writeFile(join(dir, "corpus.jsonl"), FIXTURE_DOCS.map((d) => JSON.stringify({ _id: d.id, title: d.title, text: d.text })).join("\n") + "\n");
  // One unjudged query: it must not be evaluated.
  const queries = [...FIXTURE_QUERIES.map((q) => ({ _id: q.id, text: q.text })), { _id: "q99", text: "an unjudged query about nothing" }];
  await writeFile(join(dir, "queries.jsonl"), queries.map((q) => JSON.stringify(q)).join("\n") + "\n");
  await writeFile(join(dir, "qrels", "test.tsv"), ["query-id\tcorpus-id\tscore", ...FIXTURE_QUERIES.map((q) => `${q.id}\t${q.relevant}\t1`)].join("\n") + "\n");
}
