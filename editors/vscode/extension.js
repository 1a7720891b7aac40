// The VS Code client of `hiera-lookup lsp`: plain JavaScript (no build step), selecting Hiera's
// files by glob (hieraLookup.dataGlobs), never every YAML file.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("hieraLookup");
  const documentSelector = config
    .get("dataGlobs")
    .map((pattern) => ({ scheme: "file", pattern }));
  const options = {};
  if (config.get("facts")) options.facts = config.get("facts");
  if (config.get("node")) options.node = config.get("node");
  client = new LanguageClient(
    "hiera-lookup",
    "Hiera (hiera-lookup)",
    { command: config.get("path"), args: ["lsp"] },
    { documentSelector, initializationOptions: options }
  );
  context.subscriptions.push(
    vscode.commands.registerCommand("hieraLookup.selectNode", async () => {
      const node = await vscode.window.showInputBox({
        prompt: "The node (certname) hovers answer for",
      });
      if (node) {
        await client.sendRequest("workspace/executeCommand", {
          command: "hiera-lookup.selectNode",
          arguments: [node],
        });
      }
    })
  );
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
