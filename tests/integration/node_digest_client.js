// A Node client of the gateway, as Node programs log in to monerod: the npm "request"
// library (Debian's node-request, found through NODE_PATH=/usr/share/nodejs) with
// HTTP Digest, auth {user, pass, sendImmediately: false}, so it answers the 401's
// challenge. Two calls: a JSON-RPC get_info on /json_rpc and the plain-JSON
// /get_height. Prints one JSON line: per call the HTTP status, the Authorization header
// it sent after the challenge, and the body.
//
//   node node_digest_client.js BASE_URL USER PASS
'use strict';
const request = require('request');

const [base, user, pass] = process.argv.slice(2);
const auth = { user: user, pass: pass, sendImmediately: false };

function call(path, body) {
  return new Promise((resolve) => {
    request.post({ url: base + path, auth: auth, json: body, timeout: 30000 }, (err, res, parsed) => {
      if (err) {
        resolve({ path: path, error: String(err) });
        return;
      }
      resolve({
        path: path,
        status: res.statusCode,
        authorization: (res.request.headers && res.request.headers.authorization) || '',
        body: parsed,
      });
    });
  });
}

(async () => {
  const calls = [];
  calls.push(await call('/json_rpc', { jsonrpc: '2.0', id: 1, method: 'get_info' }));
  calls.push(await call('/get_height', {}));
  console.log(JSON.stringify({ version: require('request/package.json').version, calls: calls }));
})();
