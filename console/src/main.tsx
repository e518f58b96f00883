// The bundled Chinese font in the weights the styles use (400 text, 600/700 headings and labels),
// each as one whole simplified-Chinese face loaded before the first render (below). The package's
// default faces are sliced by character range and load as text needs them: on a machine without
// CJK system fonts Chromium drew text laid out before its slice arrived (a bold heading, a
// placeholder, an option) as boxes, and left it so.
import "@fontsource/noto-sans-sc/chinese-simplified-400.css";
import "@fontsource/noto-sans-sc/chinese-simplified-700.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app.tsx";
import "./styles.css";

const chineseFaces = Promise.all([400, 700].map((weight) => document.fonts.load(`${weight} 1em "Noto Sans SC"`, "中文")));
// The faces come from the gateway itself; should they not come, the console still opens.
const atMost = new Promise((resolve) => setTimeout(resolve, 3000));
void Promise.race([chineseFaces, atMost])
  .catch(() => undefined)
  .then(() =>
    createRoot(document.getElementById("root")!).render(
      <StrictMode>
        <App />
      </StrictMode>,
    ),
  );
