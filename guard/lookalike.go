package guard

// lookalike maps a character that looks like a Latin letter (or like the
// ASCII punctuation the rules read) to that letter: a skeleton in the
// spirit of Unicode's confusables, kept to what imitates the words the
// rules look for. Mathematical, fullwidth, circled and ligature forms need
// no entry: their compatibility decomposition is already the letter.
// Upper and lower case map apart where they look different (Cyrillic Н is
// H, н is h-ish; Greek Η is H, η is n).
var lookalike = map[rune]byte{
	// Cyrillic
	'А': 'a', 'а': 'a', 'В': 'b', 'в': 'b', 'Г': 'r', 'г': 'r', 'Е': 'e', 'е': 'e', 'Ё': 'e', 'ё': 'e',
	'З': '3', 'Н': 'h', 'н': 'h', 'І': 'i', 'і': 'i', 'Ї': 'i', 'ї': 'i', 'Ј': 'j', 'ј': 'j',
	'К': 'k', 'к': 'k', 'М': 'm', 'м': 'm', 'О': 'o', 'о': 'o', 'П': 'n', 'п': 'n', 'Р': 'p', 'р': 'p',
	'С': 'c', 'с': 'c', 'Т': 't', 'т': 't', 'У': 'y', 'у': 'y', 'Х': 'x', 'х': 'x', 'Ѕ': 's', 'ѕ': 's',
	'Ԁ': 'd', 'ԁ': 'd', 'Һ': 'h', 'һ': 'h', 'Ӏ': 'l', 'ӏ': 'l', 'Ԛ': 'q', 'ԛ': 'q', 'Ԝ': 'w', 'ԝ': 'w',
	'Ү': 'y', 'ү': 'y', 'Ь': 'b', 'ь': 'b', 'Ꙇ': 'i', 'ꙇ': 'i', 'Ѵ': 'v', 'ѵ': 'v', 'Ц': 'u', 'ц': 'u',
	// Greek
	'Α': 'a', 'α': 'a', 'Β': 'b', 'β': 'b', 'Γ': 'r', 'γ': 'y', 'Ε': 'e', 'ε': 'e', 'Ζ': 'z', 'Η': 'h', 'η': 'n',
	'Ι': 'i', 'ι': 'i', 'Κ': 'k', 'κ': 'k', 'Μ': 'm', 'μ': 'u', 'Ν': 'n', 'ν': 'v', 'Ο': 'o', 'ο': 'o',
	'Ρ': 'p', 'ρ': 'p', 'Τ': 't', 'τ': 't', 'Υ': 'y', 'υ': 'u', 'Χ': 'x', 'χ': 'x', 'ω': 'w', 'ϲ': 'c',
	'Ϲ': 'c', 'ϳ': 'j', 'Ϳ': 'j', 'ς': 's', 'ϱ': 'p', 'ϰ': 'k', 'ϑ': 'o',
	// Armenian
	'օ': 'o', 'Օ': 'o', 'ս': 'u', 'Ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g', 'ք': 'p', 'զ': 'q', 'ւ': 'l',
	// Latin letters outside ASCII that compatibility leaves alone
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ɪ': 'i', 'ʀ': 'r', 'ʏ': 'y', 'ʜ': 'h', 'ʟ': 'l',
	'ɴ': 'n', 'ʙ': 'b', 'ɢ': 'g', 'ᴀ': 'a', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ᴊ': 'j', 'ᴋ': 'k', 'ᴍ': 'm',
	'ᴏ': 'o', 'ᴘ': 'p', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z', 'ꜱ': 's', 'ł': 'l',
	'Ł': 'l', 'đ': 'd', 'Đ': 'd', 'ø': 'o', 'Ø': 'o', 'ħ': 'h', 'ŧ': 't', 'ƅ': 'b', 'ɾ': 'r', 'ʋ': 'u',
	// Cherokee capitals that are Latin capitals in all but name
	'Ꭺ': 'a', 'Ᏼ': 'b', 'Ꮯ': 'c', 'Ꭰ': 'd', 'Ꭼ': 'e', 'Ꮐ': 'g', 'Ꮋ': 'h', 'Ꭻ': 'j', 'Ꮶ': 'k', 'Ꮮ': 'l',
	'Ꮇ': 'm', 'Ꮲ': 'p', 'Ꮪ': 's', 'Ꭲ': 't', 'Ꮩ': 'v', 'Ꮃ': 'w', 'Ꮓ': 'z',
	// punctuation and blanks the rules read
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-', '⁃': '-', '﹣': '-',
	'·': '.', '•': '.', '∙': '.', '‧': '.', '⋅': '.', '・': '.', '。': '.',
	'‘': '\'', '’': '\'', '‚': '\'', '‛': '\'', '′': '\'', '“': '"', '”': '"', '„': '"', '‟': '"', '″': '"',
	'«': '"', '»': '"', '‹': '<', '›': '>', '〈': '<', '〉': '>', '⟨': '<', '⟩': '>',
	'ː': ':', '˸': ':', '꞉': ':', '∶': ':', '׃': ':', '︓': ':',
	'\u0085': '\n', '\u2028': '\n', '\u2029': '\n', '\u1680': ' ', '\u2800': ' ',
}
