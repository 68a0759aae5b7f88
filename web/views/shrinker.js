// A worker (views/framechunks.js starts it): makes an ImageBitmap of a
// decoded VideoFrame at the canvas's size off the page's main thread (the
// conversion of a 1080p frame costs about what drawing it does, p50 15 ms
// without a GPU in make bench-viewer's draw profile) and gives it
// back; the frame, transferred here, is closed.
'use strict';

self.onmessage = async (e) => {
  const { id, frame, width, height } = e.data;
  try {
    const bmp = await createImageBitmap(frame, { resizeWidth: width, resizeHeight: height, resizeQuality: 'low' });
    self.postMessage({ id, bmp }, [bmp]);
  } catch (err) {
    self.postMessage({ id, error: String(err) });
  } finally {
    frame.close();
  }
};
