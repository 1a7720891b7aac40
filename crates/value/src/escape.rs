//! Text from the analysed tree (keys, values, file and node names, error messages) as each
//! kind of output may carry it: one function per kind, shared by every command that writes
//! that kind (`diff`, `lint`, `where`, lookups).
//!
//! * For people (a terminal, a CI log): [`printable`] (control characters, line
//!   separators and bidirectional overrides shown escaped, bounded).
//! * GitHub workflow commands (`::error file=…,title=…::message`): [`github_data`] for the
//!   message and [`github_property`] for a property, as actions/toolkit's `escapeData` and
//!   `escapeProperty` do (the runner decodes them back), so that no piece of data ends the
//!   line or a property.
//! * Markdown (a pull-request comment): [`markdown_text`], [`markdown_code`] and
//!   [`markdown_fenced`].

pub use crate::limits::printable;

/// A workflow command's message: `%`, CR and LF percent-encoded (toolkit `escapeData`).
pub fn github_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// A workflow command's property value (`file=`, `title=`): also `:` and `,`, which end a
/// property (toolkit `escapeProperty`).
pub fn github_property(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Markdown paragraph, table cell or HTML element, shown as it is: made
/// [`printable`] (so it stays on its line and in its cell), then every character Markdown,
/// GitHub's tables or HTML give a meaning (`|`, backticks, `<`, `&`, `*`, `_`, `[` …) written
/// as a character reference, which Markdown never reads as structure.
pub fn markdown_text(s: &str) -> String {
    let p = printable(s);
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '|' | '`' | '\\' | '*' | '_' | '[' | ']' | '~' | '#' => {
                out.push_str(&format!("&#{};", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Text shown as code in Markdown (a paragraph, a heading, a table cell): a backtick span
/// of the [`printable`] text, where Markdown reads nothing, when that can hold it; else (a
/// backtick, a `|`, which splits a table cell even inside a span, or an edge space)
/// `<code>` around [`markdown_text`]. (Inside an HTML element, where Markdown is not read,
/// write `<code>` around [`markdown_text`] directly.)
pub fn markdown_code(s: &str) -> String {
    let p = printable(s);
    if p.is_empty() || p.contains(['`', '|']) || p.starts_with(' ') || p.ends_with(' ') {
        format!("<code>{}</code>", markdown_text(s))
    } else {
        format!("`{p}`")
    }
}

/// A line inside a `~~~` fenced block, where Markdown reads nothing but the closing fence:
/// [`printable`] (one line), with any run of three tildes broken up.
pub fn markdown_fenced(s: &str) -> String {
    printable(s).replace("~~~", "~ ~ ~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_as_the_toolkit_does() {
        assert_eq!(github_data("a%b\nc\rd: e, f"), "a%25b%0Ac%0Dd: e, f");
        assert_eq!(github_property("x: y, z%\n\r"), "x%3A y%2C z%25%0A%0D");
        // No line of the output can start a command of its own.
        assert!(!github_data("x\n::error file=README.md::boom").contains('\n'));
    }

    #[test]
    fn markdown_keeps_data_in_its_place() {
        assert_eq!(
            markdown_text("a|b `c` <img src=x> *d* [e](f) \\ &amp;\nnext"),
            "a&#124;b &#96;c&#96; &lt;img src=x&gt; &#42;d&#42; &#91;e&#93;(f) &#92; &amp;amp;&#92;nnext"
        );
        assert_eq!(markdown_code("k|`x`"), "<code>k&#124;&#96;x&#96;</code>");
        assert_eq!(markdown_code("a::b <i>*c*</i>"), "`a::b <i>*c*</i>`");
        assert_eq!(markdown_code("\x1b[31m\n"), "`\\e[31m\\n`");
        assert_eq!(markdown_fenced("a\n~~~~\x1b"), "a\\n~ ~ ~~\\e");
    }
}
