/** Screenshot comparison for the viewer's browser tests, done in the browser (no image library needed). */
import type { Browser } from 'playwright-core';

/** The share of pixels that differ (by more than 48 in a channel) between two PNGs of one size (1 if sizes differ). */
export async function pixelDifference(browser: Browser, a: Buffer, b: Buffer): Promise<number> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(
      async ([first, second]) => {
        const load = async (base64: string) => {
          const image = new Image();
          image.src = `data:image/png;base64,${base64}`;
          await image.decode();
          const canvas = new OffscreenCanvas(image.width, image.height);
          const context = canvas.getContext('2d')!;
          context.drawImage(image, 0, 0);
          return context.getImageData(0, 0, image.width, image.height);
        };
        const [x, y] = [await load(first), await load(second)];
        if (x.width !== y.width || x.height !== y.height) return 1;
        let differing = 0;
        for (let at = 0; at < x.data.length; at += 4) {
          for (let channel = 0; channel < 3; channel++) {
            if (Math.abs(x.data[at + channel]! - y.data[at + channel]!) > 48) {
              differing++;
              break;
            }
          }
        }
        return differing / (x.width * x.height);
      },
      [a.toString('base64'), b.toString('base64')] as const,
    );
  } finally {
    await page.close();
  }
}
