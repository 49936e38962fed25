import { describe, expect, it } from "vitest";
import { ItemList } from "./item-list.js";

describe("ItemList", () => {
  it("drops a repeat and keeps the first place under the 'first' policy", () => {
    const list = new ItemList({ repeat: "first", caseless: true }, ["Alpha", "Beta", "alpha"]);
    expect(list.values()).toEqual(["Alpha", "Beta"]);
  });

  it("moves a repeat to the newest place under the 'latest' policy", () => {
    const list = new ItemList({ repeat: "latest", caseless: false }, ["npm test", "npm run build", "npm test"]);
    expect(list.values()).toEqual(["npm run build", "npm test"]);
  });

  it("compares exactly when not caseless", () => {
    const list = new ItemList({ repeat: "latest", caseless: false }, ["README.md", "readme.md"]);
    expect(list.values()).toEqual(["README.md", "readme.md"]);
  });

  it("treats whitespace runs as one space", () => {
    const list = new ItemList({ repeat: "first", caseless: true }, ["fix  the\nparser", "fix the parser"]);
    expect(list.values()).toEqual(["fix the parser"]);
  });

  it("counts a clipped item as equal to the full item it is a prefix of, and keeps the full text", () => {
    const list = new ItemList({ repeat: "first", caseless: true }, ["Refactor the token counter so that…", "Other"]);
    list.add("Refactor the token counter so that it caches per message");
    expect(list.values()).toEqual(["Refactor the token counter so that it caches per message", "Other"]);
  });

  it("does not add a clipped item when a full item it is a prefix of is present", () => {
    const list = new ItemList({ repeat: "first", caseless: true }, ["Refactor the token counter so that it caches"]);
    list.add("Refactor the token counter so…");
    expect(list.size).toBe(1);
  });

  it("deletes an item and can add it again later", () => {
    const list = new ItemList({ repeat: "first", caseless: true }, ["a item", "b item"]);
    list.delete("A ITEM");
    expect(list.has("a item")).toBe(false);
    list.add("a item");
    expect(list.values()).toEqual(["b item", "a item"]);
  });

  it("ignores blank items", () => {
    expect(new ItemList({ repeat: "first", caseless: true }, ["", "  \n"]).size).toBe(0);
  });
});
