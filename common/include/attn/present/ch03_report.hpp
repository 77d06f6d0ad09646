// Presentation of chapter 03 (self-attention): each function prints one step's results through
// the Narrator; the numbers and verdicts come from attn/studies/self_attention_study.hpp, and the
// sentences are chosen by the verdicts' outcomes. Nothing here measures.
#pragma once

#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/studies/self_attention_study.hpp"

namespace attn {

// Step 4: the weights as a heatmap shaded from 0 to their largest entry (not to 1), so that the
// near-uniform rows of a long sentence (1/n below the first shade's edge) still show their pattern.
void show_weights_heatmap(Narrator& nar, const Mat& weights, const Labels& words);
// Step 4: "row sums: min …, max …" and what the verdict makes of it.
void report_row_sums(Narrator& nar, const RowSumCheck& c);
// Step 5: the output against the double-precision reference, with its criterion and verdict.
void report_reference(Narrator& nar, const ReferenceAgreement& c);
// Step 6: the masked weights drawn with '·' for the masked pairs, and the three causal checks.
void report_causal(Narrator& nar, const Mat& weights, const Mat& mask, const Labels& words, const CausalCheck& c);
// Step 7: the √d_k table (recorded as "scaling"), its verdicts, and the 1/d_k slip of the source article's
// companion card "Attention mechanism" (attn/present/chapters.hpp: source_card).
void report_scaling(Narrator& nar, const ScalingStudy& s, std::size_t n_keys, std::size_t trials);
// Step 8: equivariance per word, invariance of the pooled summary.
void report_permutation(Narrator& nar, const PermutationCheck& c, const std::string& sentence,
                        const std::string& shuffled);
// Step 8, with step 6's causal mask: the same check, which the mask breaks.
void report_masked_permutation(Narrator& nar, const PermutationCheck& c);
// Step 9: the table of weights per temperature (recorded as "lookup_taus", "lookup_weights").
// Step 9's setup: what τ is, and which key rows repeat step 1's X (animals also in the sentence).
void report_lookup_setup(Narrator& nar, const Labels& animals, const Labels& sentence);
void report_lookup(Narrator& nar, const LookupStudy& s, const Labels& keys, std::size_t d_model);
// Step 10: Vaswani et al. 2017's Table 1 beside the measured paths (recorded as "path_length").
void report_path_length(Narrator& nar, const PathLengthStudy& s);

// The closing lines, each chosen by the verdict of the step it sums up.
std::vector<std::string> ch03_takeaway(const RowSumCheck& sums, const ScalingStudy& scaling,
                                       const PermutationCheck& permutation, const PathLengthStudy& paths);

}  // namespace attn
