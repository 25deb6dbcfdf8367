export * from './versions';
export * from './capabilities';
export * from './methods';
export * from './types';
export * from './client-features';
