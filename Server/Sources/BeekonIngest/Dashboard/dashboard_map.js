// The dashboard's map (inlined into dashboard.html by the server): Web Mercator on a
// canvas, drawn by this file alone; mouse-wheel / pinch zoom and drag-pan; after the view
// settles, each selected device's history is re-requested for the new zoom (debounced).
// Uses `devices`, `api`, `historyFrom`, `circleId` and `TILE_URL` from the page.
const canvas = document.getElementById("map");
const tiles = new Map();
// The view: fractional zoom and the centre in world pixels at zoom 0 (0…256).
// `user` turns true on the first pan/zoom: the view then stays where the user put it.
const view = { zoom: 2, x: 128, y: 128, user: false };
let historyGeneration = 0;
let historyLoads = 0;
let reloadTimer = null;

function world(lon, lat) {
  const sin = Math.sin(Math.max(-85.05, Math.min(85.05, lat)) * Math.PI / 180);
  return [(lon + 180) / 360 * 256, (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * 256];
}
function size() { return [canvas.clientWidth || 800, canvas.clientHeight || 600]; }
function screen(lon, lat, w, h) {
  const p = world(lon, lat), s = Math.pow(2, view.zoom);
  return [(p[0] - view.x) * s + w / 2, (p[1] - view.y) * s + h / 2];
}
// The zoom (0…18) at which a box [w, s, e, n] fits in 85 % of the map, as the server fits.
function fitZoom(b, w, h) {
  let zoom = 18;
  while (zoom > 0) {
    const s = Math.pow(2, zoom), a = world(b[0], b[3]), c = world(b[2], b[1]);
    if ((c[0] - a[0]) * s < w * 0.85 && (c[1] - a[1]) * s < h * 0.85) break;
    zoom--;
  }
  return zoom;
}
function autoFit() {
  if (view.user) return;
  let box = null;
  const grow = (w, s, e, n) => { box = box ? [Math.min(box[0], w), Math.min(box[1], s), Math.max(box[2], e), Math.max(box[3], n)] : [w, s, e, n]; };
  for (const d of devices.values()) {
    if (!d.selected) continue;
    if (d.bounds) grow(...d.bounds);
    if (d.last) grow(d.last.longitude, d.last.latitude, d.last.longitude, d.last.latitude);
  }
  if (!box) return;
  const [w, h] = size();
  view.zoom = fitZoom(box, w, h);
  const a = world(box[0], box[3]), c = world(box[2], box[1]);
  view.x = (a[0] + c[0]) / 2; view.y = (a[1] + c[1]) / 2;
}

// --- history: the first request fits the view on the server; later ones follow the zoom ---
async function loadHistory(d, zoom) {
  const generation = historyGeneration;
  const detail = zoom === null ? "&fit=" + size().map(Math.round).join("x") : "&zoom=" + zoom;
  const r = await api("/v1/devices/" + d.id + "/history?from=" + encodeURIComponent(historyFrom()) + detail);
  if (!r.ok || generation !== historyGeneration) return;
  const h = await r.json();
  if (generation !== historyGeneration) return;
  d.track = h.points;
  d.rawCount = h.raw_count;
  d.bounds = h.bounds;
  d.historyZoom = h.zoom;
}
async function loadHistories(zoom) {
  historyGeneration++;
  if (circleId) return;  // a member reads no device history: the circle's map draws its stream
  await Promise.all([...devices.values()].map(d => loadHistory(d, zoom)));
  historyLoads++;
  document.body.setAttribute("data-history-loads", String(historyLoads));
  if (zoom !== null) document.body.setAttribute("data-history-zoom", String(zoom));
}
// The first render: fitted histories, the view fitted to them, drawn; its time is recorded.
async function firstRender() {
  await loadHistories(null);
  autoFit();
  const z = Math.round(view.zoom);
  document.body.setAttribute("data-history-zoom", String(z));
  draw();
  if (!document.body.dataset.firstRender) {
    document.body.setAttribute("data-first-render-points", String(drawnPoints));
    document.body.setAttribute("data-first-render", performance.now().toFixed(1));
  }
}
function reloadSoon() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(async () => { await loadHistories(Math.max(0, Math.min(22, Math.round(view.zoom)))); draw(); }, 250);
}

// --- pan and zoom -------------------------------------------------------------
function zoomAt(px, py, dz) {
  const [w, h] = size(), s = Math.pow(2, view.zoom);
  const wx = view.x + (px - w / 2) / s, wy = view.y + (py - h / 2) / s;
  view.zoom = Math.max(0, Math.min(22, view.zoom + dz));
  const t = Math.pow(2, view.zoom);
  view.x = wx - (px - w / 2) / t; view.y = wy - (py - h / 2) / t;
  view.user = true;
  draw();
  reloadSoon();
}
function panBy(dx, dy) {
  const s = Math.pow(2, view.zoom);
  view.x -= dx / s; view.y -= dy / s;
  view.user = true;
  draw();
}
function local(e) { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
canvas.style.touchAction = "none";
canvas.addEventListener("wheel", e => {
  e.preventDefault();
  const [x, y] = local(e);
  // A mouse notch (deltaY ≈ 100) is half a level; a trackpad pinch (ctrlKey) is finer.
  zoomAt(x, y, -e.deltaY * (e.ctrlKey ? 0.01 : 0.005));
}, { passive: false });
canvas.addEventListener("dblclick", e => { const [x, y] = local(e); zoomAt(x, y, 1); });
const pointers = new Map();
canvas.addEventListener("pointerdown", e => { canvas.setPointerCapture(e.pointerId); pointers.set(e.pointerId, local(e)); });
canvas.addEventListener("pointermove", e => {
  if (!pointers.has(e.pointerId)) return;
  const before = [...pointers.values()];
  const prev = pointers.get(e.pointerId), now = local(e);
  pointers.set(e.pointerId, now);
  if (pointers.size === 1) { panBy(now[0] - prev[0], now[1] - prev[1]); return; }
  // Two fingers: zoom by the change of their distance, around their midpoint.
  const after = [...pointers.values()];
  const dist = p => Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
  if (dist(before) > 0) zoomAt((after[0][0] + after[1][0]) / 2, (after[0][1] + after[1][1]) / 2, Math.log2(dist(after) / dist(before)));
});
const release = e => { if (pointers.delete(e.pointerId) && pointers.size === 0 && view.user) reloadSoon(); };
canvas.addEventListener("pointerup", release);
canvas.addEventListener("pointercancel", release);

// --- drawing --------------------------------------------------------------------
let drawnPoints = 0;
function draw() {
  const ratio = window.devicePixelRatio || 1;
  const [w, h] = size();
  canvas.width = w * ratio; canvas.height = h * ratio;
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.fillStyle = "#e8eef3"; g.fillRect(0, 0, w, h);
  if (TILE_URL) drawTiles(g, w, h); else drawGraticule(g, w, h);
  drawnPoints = 0;
  for (const d of devices.values()) {
    if (!d.selected) continue;
    g.strokeStyle = d.color; g.lineWidth = 2.5; g.lineJoin = "round"; g.beginPath();
    d.track.forEach((p, i) => { const q = screen(p[0], p[1], w, h); if (i) g.lineTo(q[0], q[1]); else g.moveTo(q[0], q[1]); });
    g.stroke();
    drawnPoints += d.track.length;
    if (d.last) {
      const q = screen(d.last.longitude, d.last.latitude, w, h);
      g.fillStyle = d.color; g.strokeStyle = "#fff"; g.lineWidth = 2;
      g.beginPath(); g.arc(q[0], q[1], 7, 0, 2 * Math.PI); g.fill(); g.stroke();
      g.fillStyle = "#1d2733"; g.font = "12px system-ui, sans-serif";
      g.fillText(d.info.model || d.id.slice(-8), q[0] + 10, q[1] - 8);
    }
  }
  document.body.setAttribute("data-drawn-points", String(drawnPoints));
  document.getElementById("info").textContent =
    "zoom " + view.zoom.toFixed(1) + " · " + drawnPoints + " track points drawn · wheel/pinch to zoom, drag to pan";
}
function drawGraticule(g, w, h) {
  const z = view.zoom, step = z >= 14 ? 0.01 : z >= 10 ? 0.1 : z >= 6 ? 1 : 10;
  g.strokeStyle = "#cfd8e0"; g.lineWidth = 1;
  for (let i = 0; i <= 360 / step; i++) {
    const x = screen(-180 + i * step, 0, w, h)[0];
    if (x < 0 || x > w) continue;
    g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke();
  }
  for (let lat = -85; lat <= 85; lat += step) {
    const y = screen(0, lat, w, h)[1];
    if (y < 0 || y > h) continue;
    g.beginPath(); g.moveTo(0, y); g.lineTo(w, y); g.stroke();
  }
}
function drawTiles(g, w, h) {
  const z = Math.max(0, Math.min(22, Math.round(view.zoom))), max = Math.pow(2, z);
  const scale = Math.pow(2, view.zoom - z), tile = 256 * scale;
  const ox = view.x * max * scale - w / 2, oy = view.y * max * scale - h / 2;
  for (let tx = Math.floor(ox / tile); tx * tile < ox + w; tx++) {
    for (let ty = Math.floor(oy / tile); ty * tile < oy + h; ty++) {
      if (ty < 0 || ty >= max) continue;
      const url = TILE_URL.replace("{z}", z).replace("{x}", ((tx % max) + max) % max).replace("{y}", ty);
      let img = tiles.get(url);
      if (!img) { img = new Image(); img.onload = draw; img.src = url; tiles.set(url, img); }
      if (img.complete && img.naturalWidth) g.drawImage(img, tx * tile - ox, ty * tile - oy, tile, tile);
    }
  }
}
window.addEventListener("resize", draw);
