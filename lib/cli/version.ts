/** The package's version, read from package.json (inlined by the bundler in the built CLI). */
import packageJson from '../../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;
