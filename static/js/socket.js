// Where the page's websockets go: the page's own host and port behind nginx (which routes /ws/ to
// daphne), or, under `make up`, daphne's own port on the page's host (<body data-ws-port>).
// Cookies do not depend on the port, so the socket is signed in as the page is.
window.refereeSocketUrl = function (path) {
  var scheme = location.protocol === "https:" ? "wss://" : "ws://";
  var port = document.body.dataset.wsPort;
  return scheme + (port ? location.hostname + ":" + port : location.host) + path;
};
