/** The viewer page: inlined by the build (tsup.config.ts), or, running from sources, bundled on first use. */

/** The page, inlined by the build; absent when running from sources. */
declare const __SWITCHBOARD_TRACE_VIEWER__: string | undefined;

let built: string | undefined;

/**
 * The viewer page without a trace. From sources, the build script bundles it now (a specifier in a variable,
 * so the build does not follow it: the published package has no scripts/).
 */
export async function emptyViewerPage(): Promise<string> {
  if (typeof __SWITCHBOARD_TRACE_VIEWER__ === 'string') return __SWITCHBOARD_TRACE_VIEWER__;
  if (built === undefined) {
    const builder = '../../scripts/build-viewer.ts';
    const { buildViewerPage } = (await import(builder)) as { buildViewerPage(): string };
    built = buildViewerPage();
  }
  return built;
}
