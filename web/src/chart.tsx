import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

/** One series of a chart: its name (the legend's) and colour. */
export type Series = { label: string; colour: string };

/**
 * A chart of counts per category, drawn by uPlot on a canvas: `bars` for one series, `lines` for
 * several. uPlot sets its styles through the DOM, never in markup, so the pages' strict
 * Content-Security-Policy holds. A canvas says nothing to a screen reader: `label` names the
 * chart, and each caller shows the same numbers in a table too.
 */
export function Chart(props: {
  label: string;
  kind: "bars" | "lines";
  /** The x axis's category names. */
  categories: string[];
  series: Series[];
  /** One array per series, a value per category. */
  values: number[][];
}) {
  const box = useRef<HTMLDivElement>(null);
  const { label, kind, categories, series, values } = props;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const x = categories.map((_, index) => index);
    const bars = kind === "bars" ? uPlot.paths.bars?.({ size: [0.7, 80] }) : undefined;
    const chart = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        scales: {
          x: { time: false, range: [-0.5, Math.max(0.5, categories.length - 0.5)] },
          // Counts: from zero, and never a scale of fractions for a handful.
          y: { range: (_chart, _min, max) => [0, Math.max(4, max)] },
        },
        axes: [
          { splits: () => x, values: (_chart, ticks) => ticks.map((tick) => categories[tick] ?? "") },
          { values: (_chart, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? String(tick) : "")) },
        ],
        series: [
          {},
          ...series.map((one) => ({
            label: one.label,
            stroke: one.colour,
            width: 2,
            ...(bars ? { fill: one.colour, paths: bars, points: { show: false } } : {}),
          })),
        ],
        legend: { show: series.length > 1, live: false },
        cursor: { show: false },
      },
      [x, ...values],
      element,
    );
    // The canvas follows its box: a phone turned sideways, or a window resized, redraws it.
    const resized = new ResizeObserver(() => {
      const width = Math.max(280, element.clientWidth);
      if (width !== chart.width) chart.setSize({ width, height: 220 });
    });
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [kind, categories, series, values]);

  return <div ref={box} className="chart" role="img" aria-label={label} />;
}
