// Chart colours from the page's CSS custom properties, so charts follow the light or dark scheme
// (prefers-color-scheme) like the rest of the page. Loaded after Chart.js, before a page's own script.
(function () {
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const theme = {
    color: css,
    palette: () => [1, 2, 3, 4, 5, 6, 7, 8].map((i) => css(`--chart-${i}`)),
  };
  if (window.Chart) {
    window.Chart.defaults.color = css("--fg");
    window.Chart.defaults.borderColor = css("--grid");
  }
  window.tilewiseTheme = theme;
})();
