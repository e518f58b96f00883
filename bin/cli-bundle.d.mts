// Types for cli-bundle.mjs (plain JavaScript: it runs before TypeScript can be compiled).
export declare const BUNDLE: string;
export declare function bundleIsFresh(): boolean;
export declare function buildBundle(): Promise<void>;
