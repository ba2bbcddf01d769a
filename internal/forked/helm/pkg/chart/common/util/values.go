/*
Copyright The Helm Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package util

import (
	"fmt"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common"
)

// ToRenderValues composes the struct from the data coming from the Releases, Charts and Values files
//
// This takes both ReleaseOptions and Capabilities to merge into the render values.
func ToRenderValues(chrt chart.Charter, chrtVals map[string]any, options common.ReleaseOptions, caps *common.Capabilities) (common.Values, error) {
	return ToRenderValuesWithSchemaValidation(chrt, chrtVals, options, caps, false)
}

// ToRenderValuesWithSchemaValidation composes the struct from the data coming from the Releases, Charts and Values files
//
// This takes both ReleaseOptions and Capabilities to merge into the render values.
func ToRenderValuesWithSchemaValidation(chrt chart.Charter, chrtVals map[string]any, options common.ReleaseOptions, caps *common.Capabilities, skipSchemaValidation bool) (common.Values, error) {
	if caps == nil {
		caps = common.DefaultCapabilities() // ferry: a function in the fork (pkg/chart/common/capabilities.go)
	}
	accessor, err := chart.NewAccessor(chrt)
	if err != nil {
		return nil, err
	}
	top := map[string]any{
		"Chart":        accessor.MetadataAsMap(),
		"Capabilities": caps,
		"Release": map[string]any{
			"Name":      options.Name,
			"Namespace": options.Namespace,
			"IsUpgrade": options.IsUpgrade,
			"IsInstall": options.IsInstall,
			"Revision":  options.Revision,
			"Service":   "Helm",
		},
	}

	vals, err := CoalesceValues(chrt, chrtVals)
	if err != nil {
		return common.Values(top), err
	}

	if !skipSchemaValidation {
		if err := ValidateAgainstSchema(chrt, vals); err != nil {
			return top, fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%w", err)
		}
	}

	top["Values"] = vals
	return top, nil
}
