// Chapter 01 · Bahdanau attention — instead of one vector c, the decoder gets a new context c_i at
// every step: a mixture of all encoder states, weighted by how well each fits the decoder's state.
// One decoding step with real numbers (energies e, weights α, context c), the whole alignment as a
// heatmap (the toy language's reorderings show off the diagonal), then BLEU by length beside
// chapter 00's model.
//   build/bin/01_bahdanau              loads data/ch01/bahdanau.safetensors and data/ch00/no_attention.safetensors
//   build/bin/01_bahdanau --train      retrains the Bahdanau model (minutes; progress bar on stderr)
// Export names: s_prev H W_a U_a v_a energies alpha context alignment reference_alignment;
// DIR/results.json holds the by-length figures of "bahdanau" and "no_attention", and
// DIR/translations.json the test sentences and both models' outputs they are computed from.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapter_models.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/ch01_report.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("01", /*default_seed=*/1, /*total_steps=*/7);
  ChapterModels models(ch, {"bahdanau"});
  models.add_earlier("--baseline", "00", "no_attention");
  ch.describe_seed(_("which reordered 10-word test sentence steps 1-5 follow (0 or 1: the first), and the seed of --train"));
  ch.set_question(_("Question: what if the decoder could look back at every source word, and choose where to look?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const ToyCorpus& corpus = models.corpus();
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    const ChapterModel cm = models.seq2seq("bahdanau", nar);
    const ChapterModel base = models.seq2seq("no_attention", nar);
    const Seq2Seq& m = cm.model;

    nar.step(_("Keep every encoder state"), "h_j = [→h_j ; ←h_j]", _("Bahdanau et al. 2014, §3.2"));
    const SentencePair& ex = reordered_pair(corpus.test, 10, nar.options().seed);
    const DecodeTrace tr = greedy_trace(m, sv.encode(ex.src), ex.src.size() + 10);
    const Mat H = slice_of(tr.tape.enc, 0);
    nar.result(describe_model(cm));
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.show("H", H, ex.src, {}, _f("row j = [forward state ; backward state] of word j (S × 2·{})", H.shape(1) / 2));
    nar.say(_f("look: the backward GRU starts at the last word, so the right half of \"{}\"'s row (columns {}-{}) has "
               "read that one word only; the left half of \"{}\"'s row has read only \"{}\".",
               ex.src.back(), H.shape(1) / 2, H.shape(1) - 1, ex.src.front(), ex.src.front()));
    nar.code("attn/nn/gru.hpp: bigru_forward; attn/models/seq2seq.hpp: seq2seq_encode");
    nar.why(_("a bidirectional encoder gives each h_j the words on both sides of j; none of them is thrown away."));

    const std::size_t i = first_reordered_step(ex.alignment, tr.tape.steps.size());  // the step narrated
    const AttentionStepView st = bahdanau_step_view(tr, i);
    const Labels out_words = output_words(tr, tv);
    nar.step(_("Score every source word"), _("e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j)"), _("Bahdanau et al. 2014, App. A.1.2"));
    nar.say(_f("decoder step i = {}: it has written \"{}\" so far and must now write the word for \"{}\"", i + 1,
                        fmt::join(Labels(out_words.begin(), out_words.begin() + std::ptrdiff_t(i)), " "),
                        ex.src[std::size_t(ex.alignment[i])]));
    const Mat& s_prev = tr.tape.steps[i].s_prev;
    nar.show("s_prev", row_of(s_prev, 0), {}, _("s_{i−1}, the decoder's state before this word"));
    nar.say(_f("look: its {} numbers are not read one by one; the score network reads them only through W_a, and "
               "what they do shows in the energies below.", s_prev.shape(1)));
    const Bahdanau& att = m.bahdanau().attention;
    nar.record("W_a", att.w_a);
    nar.record("U_a", att.u_a);
    nar.record("v_a", att.v_a);
    // Stored (in × out), as exported; the formula applies them to column vectors: W_a s_{i−1} ∈ ℝ^n_a.
    nar.say(_f("W_a ({}→{}) maps s_{{i−1}} and U_a ({}→{}) maps h_j into the {}-unit hidden layer, v_a ({}) "
               "reads it out: {}·{} + {}·{} + {} = {} learned numbers (step 7's parameter count); U_a·h_j is "
               "computed once per sentence",
               att.w_a.shape(0), att.w_a.shape(1), att.u_a.shape(0), att.u_a.shape(1), att.v_a.size(),
               att.v_a.size(), att.w_a.shape(0), att.w_a.shape(1), att.u_a.shape(0), att.u_a.shape(1), att.v_a.size(),
               att.w_a.size() + att.u_a.size() + att.v_a.size()));
    nar.show("energies", st.energies, ex.src, _("e_ij for each source word j"));
    nar.say(_("energies: the paper's word for these raw scores, before softmax turns them into weights."));
    report_energies(nar, st, ex);
    nar.code("attn/attention/additive_attention.hpp: bahdanau_keys_forward, bahdanau_step_forward");
    nar.why(_("a one-hidden-layer network rates each (decoder state, source word) pair; nothing forces it to be monotonic "
              "(each output word looking at or after the source word the previous one looked at)."));

    nar.step(_("Normalise"), _("α_ij = exp(e_ij) / Σ_k exp(e_ik)"), "eq. 6");
    report_alpha(nar, st, ex, i);
    nar.code("attn/attention/additive_attention.hpp: bahdanau_step_forward (softmax from attn/tensor/softmax.hpp)");
    nar.why(_("softmax turns scores into a distribution; the decoder's attention is this row."));

    nar.step(_("Mix"), "c_i = Σ_j α_ij h_j", "eq. 5");
    report_context(nar, st, H, ex);
    nar.say(_f("then s_i = GRU([E_tgt y_{{i−1}}; c_i], s_{{i−1}}) and y_i = argmax W_o[s_i; c_i] -> \"{}\"", out_words[i]));
    nar.code("attn/attention/additive_attention.hpp: bahdanau_step_forward; attn/models/seq2seq.hpp: seq2seq_decoder_step");
    nar.why(_("each step gets a fresh context: a 60-word sentence no longer has to fit in one vector."));

    nar.step(_("The whole alignment"), _("A = (α_ij)  target × source"));
    const SentenceAlignmentStudy align = alignment_study(tr.alignment, tr.ids.size(), ex, corpus.train);
    report_alignment(nar, tr.alignment, out_words, ex, align);
    const TestAlignmentStudy test_align = test_alignment_study(m, corpus.test, sv, tv);
    report_test_alignment(nar, test_align);
    nar.code("attn/attention/alignment.hpp: argmax_alignment, alignment_hits; attn/studies/seq2seq_study.hpp: "
             "alignment_study, test_alignment_study");
    nar.why(_("adjectives follow their noun and verbs go to the end of their clause: the bright cells step off the diagonal there."));

    nar.step(_("BLEU by sentence length, beside chapter 00"), _("same test split, greedy decoding"));
    const EvalResult rb = evaluate_model(m, corpus.test, sv, tv), rn = evaluate_model(base.model, corpus.test, sv, tv);
    const std::vector<NamedResult> results = {{"no_attention", rn}, {"bahdanau", rb}};
    const AttentionGainStudy gain = judge_attention_gain(rb, rn);
    report_attention_gain(nar, results, gain, best_at_last_step(base));
    report_wrong_outputs(nar, wrong_outputs(rb), rb);
    export_results(nar, results, corpus.test);
    nar.code("attn/models/seq2seq_eval.hpp: evaluate_model");
    nar.why(_("the context is rebuilt for every word, so nothing has to survive 60 GRU steps in one vector."));

    nar.step(_("What attention costs"), _("O(S) score evaluations per output word"));
    report_parameters(nar, m, base.model);
    nar.say(_("every output word scores all S source words: S·T evaluations of the small network per sentence. This "
              "chapter does not time that cost (step 1's training times are each checkpoint's own record, from "
              "machines not recorded, not comparable); chapter 02 times it."));
    nar.say(_("chapter 02 replaces the network by a dot product (Luong et al. 2015) and measures what that saves."));
    nar.takeaway(ch01_takeaway(gain, test_align));
  });
}
