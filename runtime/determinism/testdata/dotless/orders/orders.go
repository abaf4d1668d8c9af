// Package orders is orchestration code in a module whose path has no dot.
package orders

import (
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Place reads the wall clock.
func Place(ctx *runtime.OrchestrationContext, id string) (string, error) { // want Place:"calls time.Now"
	return id + time.Now().String(), nil // want `^time\.Now in orchestration Place`
}
