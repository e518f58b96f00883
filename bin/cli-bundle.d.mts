// Types for cli-bundle.mjs (plain JavaScript: it runs before TypeScript can be compiled).
export declare const BUNDLE: string;
export declare function bundleIsFresh(outDir?: string): boolean;
export declare function staleInputs(outDir?: string): string[];
export declare function buildBundle(outDir?: string): Promise<void>;
