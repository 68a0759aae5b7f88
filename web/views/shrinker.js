// A worker (views/framechunks.js starts it): makes an ImageBitmap of a
// decoded VideoFrame at the canvas's size off the page's main thread (the
// conversion of a 1080p frame costs 15-25 ms without a GPU) and gives it
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
