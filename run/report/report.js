// The ppsim report page (docs/report.md): a sortable ranking and, for the selected runs, a
// canvas Gantt chart per device with memory curves under it. Every number shown is read from the
// embedded data (the JSON of `ppsim simulate --format json` and the timeline writer); this script
// only lays it out, converts units (times to ms, bytes to GiB) and finds what the mouse is over.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('ppsim-data').textContent);
  const MS_PER_UNIT = { s: 1000, ms: 1, us: 0.001 }[data.time_unit] || 1;
  const BYTES_PER_GIB = 1073741824;
  const KIND_COLORS = {
    F: '#4e79a7', B: '#f28e2b', W: '#59a14f', BW: '#e15759',
    R: '#b07aa1', RW: '#9c755f', RBW: '#d37295', OV: '#76b7b2',
  };
  const RECOMPUTE_KINDS = new Set(['R', 'RW', 'RBW']);
  const LEFT = 92;          // px for lane labels
  const RIGHT = 12;
  const AXIS = 26;          // px of the time axis
  const TITLE = 20;         // px of a run's title line
  const LANE = 16;          // px per device lane of ops
  const MEMORY_LANE = 34;   // px per device memory strip
  const GAP = 10;

  const state = {
    table: 0,
    sortKey: 'rank',
    sortAscending: true,
    selected: [null, null], // row indices of the table: shown run, and the one beside it
    view: { t0: 0, t1: 1 },
    criticalPath: false,
    hover: null,
    drawn: { ops: 0, memoryCurves: 0, capLines: 0, criticalOps: 0, frames: 0 },
    ready: false,
    loadMs: null,  // from navigation to the first chart drawn
    drawMs: null,  // how long the last frame took to draw
    layout: [],
  };

  // ---- numbers as the page shows them ----
  const ms = (t) => t * MS_PER_UNIT;
  function formatNumber(value, digits) {
    if (value === null || value === undefined || !isFinite(value)) return '-';
    const magnitude = Math.abs(value);
    if (magnitude !== 0 && (magnitude >= 1e6 || magnitude < 1e-3)) return value.toExponential(3);
    return Number(value.toPrecision(digits || 6)).toString();
  }
  const formatMs = (t) => formatNumber(ms(t)) + ' ms';
  const percent = (ratio) => (ratio === null || ratio === undefined) ? '-' : (100 * ratio).toFixed(2) + '%';

  function tableRows() { return data.tables[state.table].rows; }
  function isBytes(row) { return row.timeline && row.timeline.memory.unit === 'bytes'; }
  function memoryText(row, value) {
    if (value === null || value === undefined) return '-';
    return isBytes(row) ? formatNumber(value / BYTES_PER_GIB, 4) + ' GiB'
      : formatNumber(value, 4) + ' act';
  }

  // ---- the ranking table ----
  const COLUMNS = [
    { key: 'rank', label: '#', value: (row, index) => index },
    { key: 'schedule', label: 'schedule', text: true, value: (row) => row.schedule },
    { key: 'policy', label: 'remat', text: true, value: (row) => row.policy },
    { key: 'makespan', label: 'makespan (ms)', value: (row) => row.summary && ms(row.summary.makespan) },
    { key: 'bubble', label: 'bubble', value: (row) => row.summary && row.summary.bubble_ratio },
    { key: 'peak', label: 'peak memory', value: (row) => row.summary ? row.peak : null },
    { key: 'fits', label: 'fits', value: (row) => row.summary ? (row.summary.feasible ? 1 : 0) : null },
    { key: 'bound', label: 'bound (ms)', value: (row) => row.summary && row.summary.best_lower_bound !== null ? ms(row.summary.best_lower_bound) : null },
    { key: 'gap', label: 'gap', value: (row) => row.summary ? row.summary.gap : null },
  ];

  function cellText(column, row, index) {
    if (!row.summary && column.key !== 'rank' && !column.text) return '';
    switch (column.key) {
      case 'rank': return String(index + 1);
      case 'makespan': return formatNumber(ms(row.summary.makespan));
      case 'bubble': return percent(row.summary.bubble_ratio);
      case 'peak': return memoryText(row, row.peak);
      case 'fits': return row.summary.feasible ? 'yes' : 'no';
      case 'bound': return row.summary.best_lower_bound === null ? '-' : formatNumber(ms(row.summary.best_lower_bound));
      case 'gap': return percent(row.summary.gap);
      default: return column.value(row, index);
    }
  }

  // The order of the rows under the current sort: unavailable runs and missing values last.
  function sortedIndices() {
    const rows = tableRows();
    const column = COLUMNS.find((c) => c.key === state.sortKey);
    const indices = rows.map((row, index) => index);
    const direction = state.sortAscending ? 1 : -1;
    indices.sort((a, b) => {
      const x = column.value(rows[a], a);
      const y = column.value(rows[b], b);
      const xMissing = x === null || x === undefined;
      const yMissing = y === null || y === undefined;
      if (xMissing !== yMissing) return xMissing ? 1 : -1;
      if (xMissing || x === y) return a - b;
      return (x < y ? -1 : 1) * direction;
    });
    return indices;
  }

  function renderTable() {
    const head = document.getElementById('ranking-head');
    head.textContent = '';
    for (const column of COLUMNS) {
      const th = document.createElement('th');
      th.textContent = column.label;
      th.dataset.key = column.key;
      if (column.text) th.classList.add('text');
      if (column.key === state.sortKey) th.classList.add(state.sortAscending ? 'sorted-up' : 'sorted-down');
      th.addEventListener('click', () => {
        if (state.sortKey === column.key) state.sortAscending = !state.sortAscending;
        else { state.sortKey = column.key; state.sortAscending = true; }
        renderTable();
      });
      head.appendChild(th);
    }
    head.appendChild(document.createElement('th'));
    const body = document.getElementById('ranking-body');
    body.textContent = '';
    const rows = tableRows();
    for (const index of sortedIndices()) {
      const row = rows[index];
      const tr = document.createElement('tr');
      tr.dataset.index = index;
      if (!row.summary) tr.classList.add('unavailable');
      else if (!row.summary.feasible) tr.classList.add('over-cap');
      if (state.selected[0] === index) tr.classList.add('selected-a');
      if (state.selected[1] === index) tr.classList.add('selected-b');
      for (const column of COLUMNS) {
        const td = document.createElement('td');
        td.textContent = cellText(column, row, index);
        td.classList.add(column.key);
        if (column.text) td.classList.add('text');
        tr.appendChild(td);
      }
      const action = document.createElement('td');
      if (row.summary) {
        const versus = document.createElement('button');
        versus.type = 'button';
        versus.textContent = state.selected[1] === index ? 'hide' : 'vs';
        versus.title = 'show beside the selected run, on the same time axis';
        versus.addEventListener('click', (event) => {
          event.stopPropagation();
          select(state.selected[0], state.selected[1] === index ? null : index);
        });
        action.appendChild(versus);
        tr.addEventListener('click', () => select(index, state.selected[1] === index ? null : state.selected[1]));
      } else {
        action.textContent = row.unavailable;
        action.classList.add('text', 'reason');
      }
      tr.appendChild(action);
      body.appendChild(tr);
    }
  }

  // ---- selection and the time window ----
  function selectedRuns() {
    return state.selected.filter((index) => index !== null).map((index) => tableRows()[index]);
  }

  function fullRange() {
    let end = 0;
    for (const row of selectedRuns()) end = Math.max(end, row.summary.makespan);
    return end > 0 ? end : 1;
  }

  function select(first, second) {
    state.selected = [first, second === first ? null : second];
    state.view = { t0: 0, t1: fullRange() };
    state.hover = null;
    renderTable();
    renderSummaries();
    layoutChart();
    requestDraw();
  }

  function setView(t0, t1) {
    const range = fullRange();
    const minimum = range * 1e-7;
    let width = Math.max(minimum, Math.min(range, t1 - t0));
    let start = Math.max(0, Math.min(t0, range - width));
    state.view = { t0: start, t1: start + width };
    requestDraw();
  }

  function zoom(factor, centerTime) {
    const { t0, t1 } = state.view;
    const center = centerTime === undefined ? (t0 + t1) / 2 : centerTime;
    setView(center - (center - t0) / factor, center + (t1 - center) / factor);
  }

  // ---- layout of the canvas: one block per selected run ----
  const canvas = document.getElementById('chart');
  const context = canvas.getContext('2d');
  const tooltip = document.getElementById('tooltip');
  let laidOutWidth = 0; // CSS px the canvas was sized for

  function layoutChart() {
    state.layout = [];
    let y = AXIS;
    selectedRuns().forEach((row, slot) => {
      const timeline = row.timeline;
      const block = { slot, row, title: y, lanes: [], memory: [] };
      y += TITLE;
      for (let g = 0; g < timeline.devices; ++g, y += LANE) block.lanes.push(y);
      y += 4;
      for (let g = 0; g < timeline.memory.devices.length; ++g, y += MEMORY_LANE) block.memory.push(y);
      let highest = timeline.memory.cap || 0;
      for (const device of timeline.memory.devices) highest = Math.max(highest, device.peak);
      block.memoryScale = highest > 0 ? highest * 1.08 : 1;
      y += GAP;
      state.layout.push(block);
    });
    // The height first: it may add the page's scroll bar, which narrows the canvas.
    canvas.style.height = y + 'px';
    const width = canvas.clientWidth;
    const ratio = window.devicePixelRatio || 1;
    laidOutWidth = width;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(y * ratio);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
  }

  const plotWidth = () => canvas.clientWidth - LEFT - RIGHT;
  const xOf = (t) => LEFT + (t - state.view.t0) / (state.view.t1 - state.view.t0) * plotWidth();
  const timeAt = (x) => state.view.t0 + (x - LEFT) / plotWidth() * (state.view.t1 - state.view.t0);

  // First index in [low, high) whose value is > t (values sorted ascending).
  function firstAfter(values, t, low, high) {
    while (low < high) {
      const mid = (low + high) >> 1;
      if (values[mid] > t) high = mid; else low = mid + 1;
    }
    return low;
  }

  // ---- drawing ----
  let drawPending = false;
  function requestDraw() {
    if (drawPending) return;
    drawPending = true;
    window.requestAnimationFrame(() => { drawPending = false; draw(); });
  }

  function niceStep(range, count) {
    const raw = range / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const multiple of [1, 2, 5, 10]) if (power * multiple >= raw) return power * multiple;
    return power * 10;
  }

  function drawAxis(height) {
    const { t0, t1 } = state.view;
    const step = niceStep(ms(t1 - t0), 8) / MS_PER_UNIT;
    context.font = '11px system-ui, sans-serif';
    context.textAlign = 'center';
    context.fillStyle = '#444';
    context.strokeStyle = '#eee';
    context.lineWidth = 1;
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      context.beginPath();
      context.moveTo(x, AXIS - 6);
      context.lineTo(x, height);
      context.stroke();
      context.fillText(formatNumber(ms(t)), x, AXIS - 10);
    }
    context.textAlign = 'left';
    context.fillText('ms', 4, AXIS - 10);
  }

  function drawOps(block) {
    const timeline = block.row.timeline;
    const { t0, t1 } = state.view;
    const scale = plotWidth() / (t1 - t0);
    context.save();
    context.beginPath();
    context.rect(LEFT, 0, plotWidth(), canvas.clientHeight);
    context.clip();
    for (let g = 0; g < timeline.devices; ++g) {
      const y = block.lanes[g] + 1;
      const height = LANE - 2;
      const first = timeline.device_offsets[g];
      const last = timeline.device_offsets[g + 1];
      let lastPixel = -Infinity;
      for (let e = firstAfter(timeline.end, t0, first, last); e < last && timeline.start[e] <= t1; ++e) {
        const x0 = LEFT + (timeline.start[e] - t0) * scale;
        const x1 = LEFT + (timeline.end[e] - t0) * scale;
        // Ops narrower than a pixel that start in a pixel column already painted are skipped:
        // at that zoom the column shows one of them (zoom in to see each).
        if (x1 - x0 < 1 && Math.floor(x0) === lastPixel) continue;
        lastPixel = Math.floor(x0);
        const kind = timeline.kind[e];
        const token = timeline.kinds[kind];
        context.fillStyle = KIND_COLORS[token];
        context.fillRect(x0, y, Math.max(x1 - x0, 1), height);
        if (RECOMPUTE_KINDS.has(token)) {
          context.fillStyle = 'rgba(0, 0, 0, 0.45)';
          context.fillRect(x0, y, Math.max(x1 - x0, 1), 3);
          context.fillRect(x0, y + height - 3, Math.max(x1 - x0, 1), 3);
        }
        if (x1 - x0 > 34) {
          context.fillStyle = '#fff';
          context.font = '10px system-ui, sans-serif';
          context.fillText(token + ' ' + timeline.stage[e] + ',' + timeline.microbatch[e], x0 + 3, y + height - 3, x1 - x0 - 5);
        }
        ++state.drawn.ops;
      }
    }
    if (state.criticalPath) drawCriticalPath(block);
    context.restore();
  }

  function deviceOf(timeline, entry) {
    return firstAfter(timeline.device_offsets, entry, 0, timeline.device_offsets.length) - 1;
  }

  function drawCriticalPath(block) {
    const timeline = block.row.timeline;
    context.strokeStyle = '#000';
    context.lineWidth = 2;
    let previous = null;
    for (const entry of timeline.critical_path) {
      const device = deviceOf(timeline, entry);
      const y = block.lanes[device];
      const x0 = xOf(timeline.start[entry]);
      const x1 = xOf(timeline.end[entry]);
      if (previous) {
        context.beginPath();
        context.moveTo(previous.x, previous.y);
        context.lineTo(x0, y + LANE / 2);
        context.stroke();
      }
      if (x1 >= LEFT && x0 <= LEFT + plotWidth()) {
        context.strokeRect(x0, y + 1, Math.max(x1 - x0, 1), LANE - 2);
        ++state.drawn.criticalOps;
      }
      previous = { x: x1, y: y + LANE / 2 };
    }
  }

  function drawMemory(block) {
    const memory = block.row.timeline.memory;
    const { t0, t1 } = state.view;
    context.save();
    context.beginPath();
    context.rect(LEFT, 0, plotWidth(), canvas.clientHeight);
    context.clip();
    memory.devices.forEach((device, g) => {
      const top = block.memory[g] + 3;
      const height = MEMORY_LANE - 6;
      const yOf = (value) => top + height - value / block.memoryScale * height;
      context.fillStyle = '#f6f6f6';
      context.fillRect(LEFT, top, plotWidth(), height);
      if (device.time.length > 0) {
        // The step in force at t0, then every step up to t1.
        const before = firstAfter(device.time, t0, 0, device.time.length) - 1;
        let value = before >= 0 ? device.resident[before] : 0;
        context.beginPath();
        context.moveTo(LEFT, yOf(value));
        // Steps that fall in one pixel column are drawn as one vertical line from their lowest
        // to their highest value.
        let column = null;
        let low = value;
        let high = value;
        const flush = () => {
          if (column === null) return;
          context.lineTo(column, yOf(low));
          context.lineTo(column, yOf(high));
          context.lineTo(column, yOf(value));
        };
        for (let k = before + 1; k < device.time.length && device.time[k] <= t1; ++k) {
          const x = xOf(device.time[k]);
          const pixel = Math.round(x);
          if (pixel === column) {
            value = device.resident[k];
            low = Math.min(low, value);
            high = Math.max(high, value);
            continue;
          }
          flush();
          context.lineTo(x, yOf(value));
          value = device.resident[k];
          context.lineTo(x, yOf(value));
          column = pixel;
          low = high = value;
        }
        flush();
        context.lineTo(LEFT + plotWidth(), yOf(value));
        context.strokeStyle = '#2b5d9b';
        context.lineWidth = 1.2;
        context.stroke();
        ++state.drawn.memoryCurves;
      }
      if (memory.cap !== null) {
        context.strokeStyle = '#c0392b';
        context.setLineDash([5, 3]);
        context.beginPath();
        context.moveTo(LEFT, yOf(memory.cap));
        context.lineTo(LEFT + plotWidth(), yOf(memory.cap));
        context.stroke();
        context.setLineDash([]);
        ++state.drawn.capLines;
      }
    });
    context.restore();
  }

  function drawLabels(block) {
    const row = block.row;
    const memory = row.timeline.memory;
    context.textAlign = 'left';
    context.fillStyle = '#222';
    context.font = 'bold 12px system-ui, sans-serif';
    const capText = memory.cap === null ? 'no cap'
      : (memory.unit === 'bytes' ? 'budget ' : 'cap ') + memoryText(row, memory.cap);
    context.fillText((block.slot === 0 ? 'A: ' : 'B: ') + row.schedule +
      (row.policy === 'none' ? '' : ' + ' + row.policy + ' recomputation') +
      '   makespan ' + formatMs(row.summary.makespan) + '   memory ' + capText, 4, block.title + 14);
    context.font = '11px system-ui, sans-serif';
    context.fillStyle = '#444';
    block.lanes.forEach((y, g) => context.fillText('device ' + g, 4, y + LANE - 4));
    block.memory.forEach((y, g) => context.fillText('memory ' + g, 4, y + MEMORY_LANE - 6));
    if (block.memory.length > 0) {
      context.fillStyle = '#888';
      context.fillText('top ' + memoryText(row, block.memoryScale), 4, block.memory[0] + 12);
    }
  }

  function draw() {
    const begin = performance.now();
    const height = canvas.clientHeight;
    context.clearRect(0, 0, canvas.clientWidth, height);
    state.drawn = { ops: 0, memoryCurves: 0, capLines: 0, criticalOps: 0, frames: state.drawn.frames + 1 };
    drawAxis(height);
    for (const block of state.layout) {
      drawLabels(block);
      drawOps(block);
      drawMemory(block);
    }
    if (state.hover) {
      const { x0, x1, y } = state.hover.box;
      context.strokeStyle = '#111';
      context.lineWidth = 1;
      context.strokeRect(x0 - 0.5, y + 0.5, Math.max(x1 - x0, 1) + 1, LANE - 1);
    }
    document.getElementById('window-text').textContent =
      'showing ' + formatMs(state.view.t0) + ' to ' + formatMs(state.view.t1);
    state.drawMs = performance.now() - begin;
    if (!state.ready) {
      state.ready = true;
      state.loadMs = performance.now();
    }
  }

  // ---- hover: the op (or memory value) under the mouse ----
  function describeOp(row, entry) {
    const timeline = row.timeline;
    const token = timeline.kinds[timeline.kind[entry]];
    const name = timeline.overlapped[entry] ||
      token + ' stage ' + timeline.stage[entry] + ', microbatch ' + timeline.microbatch[entry];
    const device = deviceOf(timeline, entry);
    const lines = [name + '  (device ' + device + ')',
      'start ' + formatMs(timeline.start[entry]) + ', end ' + formatMs(timeline.end[entry]) +
      ', took ' + formatMs(timeline.end[entry] - timeline.start[entry])];
    const waited = timeline.waited_for[entry];
    if (waited < 0) {
      lines.push('waited for: nothing');
    } else {
      const waitedDevice = deviceOf(timeline, waited);
      lines.push('waited for: ' + timeline.kinds[timeline.kind[waited]] + ' stage ' +
        timeline.stage[waited] + ', microbatch ' + timeline.microbatch[waited] +
        (waitedDevice === device ? ' (previous op on this device)' : ' on device ' + waitedDevice) +
        ', ended ' + formatMs(timeline.end[waited]));
    }
    if (RECOMPUTE_KINDS.has(token)) lines.push('recomputation');
    if (timeline.critical_path.includes(entry)) lines.push('on the critical path');
    return lines.join('\n');
  }

  // The op of a block's device lane at canvas x, or null (ops narrower than 3 px are found
  // within 3 px).
  function opAt(block, device, x) {
    const timeline = block.row.timeline;
    const first = timeline.device_offsets[device];
    const last = timeline.device_offsets[device + 1];
    const slack = 3 * (state.view.t1 - state.view.t0) / plotWidth();
    const t = timeAt(x);
    let best = null;
    let bestDistance = Infinity;
    for (let e = Math.max(first, firstAfter(timeline.end, t - slack, first, last)); e < last && timeline.start[e] <= t + slack; ++e) {
      const distance = t < timeline.start[e] ? timeline.start[e] - t : t > timeline.end[e] ? t - timeline.end[e] : 0;
      if (distance < bestDistance) { best = e; bestDistance = distance; }
    }
    return best;
  }

  function hoverAt(x, y) {
    state.hover = null;
    let text = null;
    for (const block of state.layout) {
      const device = block.lanes.findIndex((top) => y >= top && y < top + LANE);
      if (device >= 0 && x >= LEFT) {
        const entry = opAt(block, device, x);
        if (entry !== null) {
          const timeline = block.row.timeline;
          state.hover = { slot: block.slot, entry, box: { x0: xOf(timeline.start[entry]), x1: xOf(timeline.end[entry]), y: block.lanes[device] } };
          text = describeOp(block.row, entry);
        }
      }
      const strip = block.memory.findIndex((top) => y >= top && y < top + MEMORY_LANE);
      if (strip >= 0 && x >= LEFT) {
        const curve = block.row.timeline.memory.devices[strip];
        const t = timeAt(x);
        const k = firstAfter(curve.time, t, 0, curve.time.length) - 1;
        text = 'device ' + strip + ' at ' + formatMs(t) + ': ' +
          memoryText(block.row, k >= 0 ? curve.resident[k] : 0) + ' resident, peak ' +
          memoryText(block.row, curve.peak);
      }
    }
    if (text === null) {
      tooltip.hidden = true;
    } else {
      tooltip.textContent = text;
      tooltip.hidden = false;
      const left = Math.min(x + 14, canvas.clientWidth - tooltip.offsetWidth - 4);
      tooltip.style.left = Math.max(0, left) + 'px';
      tooltip.style.top = (y + 16) + 'px';
    }
    requestDraw();
  }

  // ---- mouse: wheel zooms around the pointer, dragging pans ----
  let drag = null;
  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    const x = event.offsetX;
    zoom(Math.pow(1.0015, -event.deltaY), x >= LEFT ? timeAt(x) : undefined);
  }, { passive: false });
  canvas.addEventListener('mousedown', (event) => {
    drag = { x: event.offsetX, t0: state.view.t0, t1: state.view.t1 };
    canvas.classList.add('panning');
  });
  window.addEventListener('mouseup', () => { drag = null; canvas.classList.remove('panning'); });
  canvas.addEventListener('mousemove', (event) => {
    if (drag) {
      const shift = (event.offsetX - drag.x) / plotWidth() * (drag.t1 - drag.t0);
      setView(drag.t0 - shift, drag.t1 - shift);
      return;
    }
    hoverAt(event.offsetX, event.offsetY);
  });
  canvas.addEventListener('mouseleave', () => { tooltip.hidden = true; state.hover = null; requestDraw(); });
  document.getElementById('zoom-in').addEventListener('click', () => zoom(2));
  document.getElementById('zoom-out').addEventListener('click', () => zoom(0.5));
  document.getElementById('zoom-fit').addEventListener('click', () => setView(0, fullRange()));
  document.getElementById('critical-path').addEventListener('change', (event) => {
    state.criticalPath = event.target.checked;
    requestDraw();
  });
  new ResizeObserver(() => {
    if (canvas.clientWidth === laidOutWidth || !state.layout.length) return;
    layoutChart();
    requestDraw();
  }).observe(document.getElementById('chart-box'));

  // ---- the parts around the chart ----
  function renderSummaries() {
    const box = document.getElementById('summaries');
    box.textContent = '';
    for (const row of selectedRuns()) {
      const summary = row.summary;
      const p = document.createElement('p');
      p.textContent = row.schedule + (row.policy === 'none' ? '' : ' + ' + row.policy) +
        ': makespan ' + formatMs(summary.makespan) + ', bubble ' + percent(summary.bubble_ratio) +
        ', peak ' + memoryText(row, row.peak) + (summary.feasible ? ' (fits)' : ' (over the cap)') +
        (summary.best_lower_bound === null ? '' : ', lower bound ' + formatMs(summary.best_lower_bound) + ', gap ' + percent(summary.gap)) +
        (summary.warnings.length ? '; ' + summary.warnings.join('; ') : '');
      box.appendChild(p);
    }
  }

  function renderHeader() {
    document.getElementById('title').textContent =
      'ppsim ' + data.command + (data.model ? ': ' + data.model : '');
    document.title = document.getElementById('title').textContent;
    document.getElementById('subtitle').textContent = 'p = ' + data.p + ' devices, m = ' + data.m +
      ' microbatches; times in ms, memory in GiB (byte model) or activations (count model)';
    const legend = document.getElementById('legend');
    for (const token of Object.keys(KIND_COLORS)) {
      const swatch = document.createElement('span');
      swatch.className = 'swatch' + (RECOMPUTE_KINDS.has(token) ? ' recompute' : '');
      swatch.style.backgroundColor = KIND_COLORS[token];
      legend.appendChild(swatch);
      legend.appendChild(document.createTextNode(token));
    }
    if (data.tables.length > 1) {
      const choice = document.getElementById('table-select');
      data.tables.forEach((table, index) => {
        const option = document.createElement('option');
        option.value = index;
        option.textContent = table.heading;
        choice.appendChild(option);
      });
      choice.addEventListener('change', () => { state.table = Number(choice.value); showBest(); });
      document.getElementById('table-choice').hidden = false;
    }
  }

  function showBest() {
    const best = tableRows().findIndex((row) => row.summary);
    state.selected = [null, null];
    if (best >= 0) select(best, null); else renderTable();
  }

  // For tests and the curious: the state, and where an op is drawn (canvas CSS pixels).
  window.ppsimReport = {
    data,
    state,
    select,
    setView,
    zoom,
    view: () => ({ t0: state.view.t0, t1: state.view.t1 }),
    opPosition(slot, entry) {
      const block = state.layout[slot];
      const timeline = block.row.timeline;
      const device = deviceOf(timeline, entry);
      return { x: (xOf(timeline.start[entry]) + xOf(timeline.end[entry])) / 2, y: block.lanes[device] + LANE / 2 };
    },
    tooltipText: () => (tooltip.hidden ? null : tooltip.textContent),
  };

  renderHeader();
  showBest();
})();
