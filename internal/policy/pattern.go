package policy

import "strings"

// pattern is a compiled wildcard pattern: '*' matches any run of
// characters, '?' any one, and (when variables are on) ${key} is
// replaced by the request's value of key before matching; ${*}, ${?}
// and ${$} stand for the literal characters.
type pattern struct {
	text   string
	tokens []token
	plain  bool // no wildcard, no variable: compare text directly
}

type tokenKind uint8

const (
	literal tokenKind = iota
	star
	question
	variable
)

type token struct {
	kind tokenKind
	text string // literal text, or the variable's key (lower-cased)
}

func compilePattern(s string, vars bool) pattern {
	p := pattern{text: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p.tokens = append(p.tokens, token{kind: literal, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '*':
			flush()
			p.tokens = append(p.tokens, token{kind: star})
		case c == '?':
			flush()
			p.tokens = append(p.tokens, token{kind: question})
		case vars && c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				lit.WriteByte(c)
				continue
			}
			name := s[i+2 : i+end]
			switch name {
			case "*", "?", "$":
				lit.WriteString(name)
			default:
				flush()
				p.tokens = append(p.tokens, token{kind: variable, text: strings.ToLower(strings.TrimSpace(name))})
			}
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	p.plain = len(p.tokens) == 0 || (len(p.tokens) == 1 && p.tokens[0].kind == literal)
	if p.plain && len(p.tokens) == 1 {
		p.text = p.tokens[0].text
	}
	return p
}

// match reports whether s matches the pattern, with variables taken from
// vars (a variable with no value makes the pattern match nothing, as an
// AWS policy variable without a value does).
func (p pattern) match(s string, vars map[string][]string) bool {
	if p.plain {
		return s == p.text
	}
	toks := p.tokens
	for _, t := range toks {
		if t.kind == variable {
			toks = resolve(toks, vars)
			if toks == nil {
				return false
			}
			break
		}
	}
	return globMatch(toks, s)
}

func resolve(toks []token, vars map[string][]string) []token {
	out := make([]token, 0, len(toks))
	for _, t := range toks {
		if t.kind != variable {
			out = append(out, t)
			continue
		}
		v := vars[t.text]
		if len(v) != 1 {
			return nil
		}
		out = append(out, token{kind: literal, text: v[0]})
	}
	return out
}

// globMatch matches tokens against s, backtracking over the last star
// only (linear for the patterns policies contain).
func globMatch(toks []token, s string) bool {
	ti, si := 0, 0
	starTi, starSi := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case star:
				starTi, starSi = ti, si
				ti++
				continue
			case question:
				if si < len(s) {
					ti++
					si++
					continue
				}
			case literal:
				if strings.HasPrefix(s[si:], t.text) {
					ti++
					si += len(t.text)
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starTi < 0 || starSi >= len(s) {
			return false
		}
		starSi++
		ti, si = starTi+1, starSi
	}
}
