package calc

import (
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func manifest() apps.Manifest {
	return apps.Manifest{
		Name:        "calc",
		Description: "A calculator that works with exact numbers: no rounding errors, 0.1+0.2 is 0.3.",
		Functions: []apps.Function{{
			Name: "evaluate",
			Description: "Evaluate an arithmetic expression exactly. Use numbers (12, 0.5, 1e-3), + - * /, ^ for whole powers " +
				"(2^-3 is allowed), parentheses, and % for percent (200*15% is 30). -2^2 is -4 and 2^3^2 is 512. " +
				"The result is exact when it has a finite decimal form; otherwise it is rounded to 20 significant digits " +
				"and exact holds the fraction, such as 1/3. At most 1000 characters; exponents up to 10000.",
			Effect: apps.EffectRead,
			Params: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","description":"The expression, such as (1.5 + 2) * 3^2 / 7."}},"required":["expression"],"additionalProperties":false}`),
			Result: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"},"result":{"type":"string"},"exact":{"type":"string"}},"required":["expression","result"]}`),
		}},
		Provides: map[string]string{"calc.evaluate": "evaluate"},
	}
}
