// The words of the package's devtools panel (js/devtools-words.js, served at
// /pkg/devtools-words.js with the rest of the package): the page and the inspector word states and
// the store's reasons as the panel does, from the same file. Not an export of the package (the panel imports it
// relatively): the inspector is the repository's own page, served with the same pkg/. tsconfig.json
// maps the URL to these declarations; www/build.mjs keeps it external.
type Words = Readonly<Record<string, string>>;
export declare const TURN_WHY: Words;
export declare const TURN_STANDING: Words;
export declare const QUESTION_WHY: Words;
export declare const REQUEST_STANDING: Words;
export declare const OWNER_WHY: Words;
/** A session's wire state in words (`WAITING_FOR_INPUT` → "Waiting for your answer"; with
 * `action` `"permission"`, "Waiting for your permission"). */
export declare function stateWords(state: unknown, action: string | null | undefined): string;
/** `table[code]`, or words that say there are none. */
export declare function words(table: Words, code: string): string;
