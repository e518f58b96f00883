// The local embedding models, written into the bundle at build time from lib/models/model-catalog.ts.
export interface CatalogModel {
  name: string;
  description: string;
  dimension: number;
  maxTokens: number;
}

declare const __MODEL_CATALOG__: CatalogModel[];
declare const __DEFAULT_MODEL__: string;

export const MODELS: CatalogModel[] = __MODEL_CATALOG__;
export const DEFAULT_MODEL: string = __DEFAULT_MODEL__;
