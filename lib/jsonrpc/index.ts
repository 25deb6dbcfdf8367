export * from './types';
export * from './errors';
export * from './classify';
export * from './codec';
export * from './excerpt';
