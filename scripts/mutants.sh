#!/usr/bin/env bash
# Mutation check of the plan's bindings (docs/benchmarks.md): each mutant
# takes one defence out of a copy of the working tree and runs the tests
# that must catch it. A mutant the tests do not catch fails this script.
#
#   bash scripts/mutants.sh            # every mutant
#   bash scripts/mutants.sh no-bind    # the named ones
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# name|file|perl substitution|go test arguments
mutants=(
  "no-bind|hub/plan.go|s/Needs: needs, Bind: s\.Bind\}/Needs: needs}/|./hub ./engine -run TestAttackSuite\$|TestBenignTasksUnderExpected"
  "bound-always|hub/gate.go|s/if why := tr\.unbound\(args, fn\.KeyArgs\(\), fn\.Params, s, g\.app\); why != \"\"/if why := \"\"; why != \"\"/; s/if why := tr\.unbound\(args, entry\.KeyArgs\(\), entry\.Request, routedTo, g\.app\); why != \"\"/if why := \"\"; why != \"\"/|./hub -run TestAttackSuite\$"
  "any-literal|hub/bind.go|s/case !ok:\n/case !ok \&\& false:\n/; s/case negated\(env\.query, b\.Value\):/case false:/|./hub -run TestAttackSuite\$|TestCheckBindings"
  "no-negation|hub/bind.go|s/case negated\(env\.query, b\.Value\):/case false:/|./hub -run TestAttackSuite\$|TestCheckBindings"
  "whole-results|hub/admit.go|s/(\tvar fields \[\]string\n)/\$1\tfor _, d := range s.DependsOn {\n\t\tif r := done[d]; r.Value != nil {\n\t\t\tsh.add(d, r.Value)\n\t\t}\n\t}\n/|./hub -run TestAttackSuite\$"
  "free-text-routine|hub/admit.go|s/if len\(sh\.freeText\) > 0 && o\.outOfProcess\(s\.App\) \{/if false {/|./hub -run TestAttackSuite\$"
  "policy-chooses|permissions/request.go|s/(if len\(r\.Choices\) > 0 \{\n\t\t\/\/ Which app serves is the person's choice, or a rule's\.\n)/\$1\t\tif true {\n\t\t\treturn Decision{Answer: AnswerOnce, Source: SourcePolicy, Choice: r.Choices[0]}, nil\n\t\t}\n/|./hub -run TestAttackSuite\$"
  "claims-quoted|hub/synth.go|s/(func \(o others\) about\(text string\) string \{\n)/\$1\treturn \"\"\n/|./hub -run TestAttackSuite\$"
  "app-names-exact|hub/synth.go|s/if namesApp\(text, a\)/if containsWordFold(text, a)/|./hub -run TestAttackSuite\$"
  "raw-json|internal/termtext/writer.go|s/w\.buf = appendJSON\(w\.buf\[:0\], p\)/w.buf = append(w.buf[:0], p...)/|./hub -run TestAttackSuite\$"
  "raw-text|internal/termtext/writer.go|s/w\.buf = appendSanitized\(w\.buf\[:0\], string\(p\), false\)/w.buf = append(w.buf[:0], p...)/|./hub -run TestAttackSuite\$"
  "raw-answer|hub/synth.go|s/text := termtext\.OneLine\((strings\.Join\(strings\.Fields\(t\.text\), \" \"\))\)/text := \$1 + termtext.OneLine(\"\")/|./hub -run TestAttackSuite\$"
  "silent-refusal|hub/exec.go|s/if stream && err == nil && refused != nil && !did \{/if false {/|./engine -run TestBenignTasksUnderExpected"
  "no-city-zones|apps/clock/clock.go|s/if z, ok := zoneOfCity\(name\); ok \{/if z, ok := \"\", false; ok {/|./engine -run TestBenignTasksUnderExpected"
)

want=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name file subst rest <<<"$m"
  if ((${#want[@]})) && [[ ! " ${want[*]} " == *" $name "* ]]; then
    continue
  fi
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  (cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$tmp/tree")
  before=$(sha256sum "$tmp/tree/$file")
  perl -0pi -e "$subst" "$tmp/tree/$file"
  if [[ $(sha256sum "$tmp/tree/$file") == "$before" ]]; then
    echo "mutant $name: the substitution changed nothing in $file (the code moved?)"
    failed=1
    continue
  fi
  # The test arguments: packages, then -run and its pattern (which may hold '|').
  pkgs=${rest%% -run *}
  run=${rest#* -run }
  if out=$(cd "$tmp/tree" && go test -count=1 $pkgs -run "$run" 2>&1); then
    echo "mutant $name: NOT caught by go test $pkgs -run '$run'"
    failed=1
  else
    caught=$(grep -E -- '^\s*--- FAIL: ' <<<"$out" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | sort -u | head -12 | tr '\n' ' ' || true)
    if [[ -z $caught ]]; then
      caught=$(grep -m3 -E 'cannot|undefined|error|declared' <<<"$out" | tr '\n' ' ' || true)
      echo "mutant $name: did not build or failed outside a test: $caught"
      failed=1
      continue
    fi
    echo "mutant $name: caught by $caught"
  fi
done
exit $failed
