// Chapter 00 · The Seq2Seq bottleneck — a GRU encoder squeezes a whole sentence into one vector
// c = h_S; a GRU decoder translates from it. One sentence end to end, then BLEU, exact match and
// token accuracy by source length on the toy corpus's test split, and the bottleneck itself: which
// target positions the decoder still gets right as sentences grow.
//   build/bin/00_seq2seq_bottleneck              loads data/ch00/no_attention.safetensors (seconds)
//   build/bin/00_seq2seq_bottleneck --train      retrains it (minutes; progress bar on stderr)
// Export names: src_embeddings encoder_states context cosine_to_c decoder_states decoder_logits
// position_accuracy; DIR/results.json holds the by-length figures (model "no_attention"), and
// DIR/translations.json the test sentences and the model's outputs they are computed from.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapter_models.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/ch00_report.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("00", /*default_seed=*/1, /*total_steps=*/7);
  ChapterModels models(ch, {"no_attention"});
  ch.describe_seed(_("which 9-word test sentence steps 1-4 follow (0 or 1: the first), and the seed of --train"));
  ch.set_question(_("Question: can one fixed vector carry a whole sentence — and what happens as sentences grow?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const ToyCorpus& corpus = models.corpus();
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    const ChapterModel cm = models.seq2seq("no_attention", nar);
    const Seq2Seq& m = cm.model;

    // ---------------------------------------------------------------- one sentence, end to end
    nar.step(_("The task: a toy translation with reorderings"), "x = (x_1 … x_S) ↦ y = (y_1 … y_T)");
    nar.say(_f("{} training, {} validation, {} test pairs; source lengths 4–60; {} source and {} target words "
               "(plus 4 special tokens such as <bos> and <eos>)",
                        corpus.train.size(), corpus.valid.size(), corpus.test.size(), sv.size() - 4, tv.size() - 4));
    nar.say(_("S, T: the source and target sentence lengths; the model below is the one without attention: its "
              "decoder sees one vector c = h_S, the encoder's last state (step 3)."));
    nar.say(_("rules: adjectives follow their noun, verbs end their clause, and a verb ends in -a when its subject is "
              "animate, -o when it is not"));
    const SentencePair& ex = pair_of_length(corpus.test, 9, nar.options().seed);
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.say(_("BLEU (Papineni et al. 2002) scores a translation by the 1- to 4-word sequences it shares with the reference, "
            "0-100; step 5 measures it."));
    nar.result(describe_model(cm));
    report_best_step(nar, cm);
    nar.code("attn/data/corpus.hpp: make_toy_corpus; attn/present/chapter_models.hpp: ChapterModels::seq2seq");
    nar.why(_("the reference moves words (adjective after noun, verb to the end of its clause), so word-by-word copying fails."));

    nar.step(_("Words become vectors"), _("e_j = E_src[x_j]  ∈ ℝ^32"));
    const DecodeTrace tr = greedy_trace(m, sv.encode(ex.src), ex.src.size() + 10);
    nar.show("src_embeddings", source_embedding_rows(tr), ex.src, {}, _("one learned row per source word"));
    report_repeated_word(nar, source_embedding_rows(tr), ex.src);
    nar.code("attn/nn/embedding.hpp: embedding_forward; attn/models/seq2seq.hpp: greedy_trace");
    nar.why(_("the embedding table is trained with everything else; a word gets the same row wherever it stands."));

    nar.step(_("The encoder reads left to right"), _("h_j = GRU(e_j, h_{j−1}),   c = h_S"), _("Cho et al. 2014 (GRU); Sutskever et al. 2014 (seq2seq, with LSTMs)"));
    nar.say(_("GRU: gated recurrent unit (Cho et al. 2014); its gates choose how much of h_{j−1} to keep and how much "
              "of the new word to write in. Seq2seq: sequence-to-sequence, an encoder that reads one sentence and a "
              "decoder that writes another; Sutskever et al. built theirs of LSTMs (long short-term memory, an older "
              "gated recurrent network with a separate memory cell)."));
    const Mat H = slice_of(tr.tape.enc, 0);
    nar.show("encoder_states", H, ex.src, {}, fmt::format("h_1 … h_{} (S × {})", H.shape(0), H.shape(1)));
    const Vec c = row_of(H, H.shape(0) - 1);
    nar.show("context", c, {}, _f("c = h_{}: the only thing the decoder will ever see of the source", H.shape(0)));
    report_cosine_to_c(nar, cosine_to_last(H), ex.src);
    nar.code("attn/nn/gru.hpp: gru_sequence_forward; attn/models/seq2seq.hpp: seq2seq_encode");
    nar.why(_f("whatever the sentence's length, the decoder gets these {} numbers; a 60-word sentence must fit in them too.", c.size()));

    nar.step(_("The decoder writes word by word"), _("s_i = GRU([E_tgt y_{i−1}; c], s_{i−1})"));
    nar.say(_f("then y_i = argmax softmax(W_o[s_i; c]): E_tgt is the target words' embedding table, [a; b] stacks a "
               "and b into one vector, and W_o, the output layer, gives a score to each of the {} target tokens; softmax turns those scores into "
               "probabilities that sum to 1, and argmax picks the most probable.",
               tv.size()));
    report_decoding(nar, tr, ex, tv);
    nar.code("attn/models/seq2seq.hpp: seq2seq_decoder_step, greedy_trace; attn/studies/seq2seq_study.hpp: decode_rows");
    nar.why(_("in training the decoder reads the reference's previous word (teacher forcing); at test time it reads its "
            "own previous guess, so one wrong word can lead to more."));

    // ---------------------------------------------------------------- the experiment, measured
    nar.step(_("BLEU by sentence length"), _("BLEU = BP·exp(¼ Σ log p_n)"), _("Papineni et al. 2002"));
    nar.say(_("p_n (n = 1…4), the modified n-gram precision: the share of the output's n-word sequences found in "
              "the reference, each counted at most as often as the reference has it, with the counts summed "
              "over a bucket's sentences first (corpus BLEU: one score per bucket, not a mean of sentence scores); "
              "exp(¼ Σ log p_n) is their geometric mean; BP = min(1, exp(1 − r/c)), r and c the "
              "reference's and the output's total lengths, penalises output shorter than the reference; × 100 "
              "(Papineni et al. 2002, §2). greedy: take the most probable word at each step."));
    const BottleneckStudy b = judge_bottleneck(evaluate_model(m, corpus.test, sv, tv), position_ranges(), corpus.test);
    nar.say(_f("greedy decoding of the {} test sentences of 5-60 words (the other {} of the {} are shorter); "
                        "corpus BLEU-4, exact match and token accuracy per bucket (exact %: outputs equal to their "
                        "reference; tok %: reference words matched at their own position)",
                        b.eval.overall.sentences, corpus.test.size() - b.eval.overall.sentences, corpus.test.size()));
    report_bottleneck_bleu(nar, b);
    nar.code("attn/models/seq2seq_eval.hpp: evaluate_model; attn/data/bleu.hpp: corpus_bleu; "
             "attn/studies/seq2seq_study.hpp: judge_bottleneck");
    nar.why(bleu_vs_token_why(b));

    nar.step(_("Bottleneck and compounding errors, by position"), _("accuracy of y_i by target position i"));
    report_positions(nar, b);
    nar.code("attn/models/seq2seq_eval.hpp: position_accuracy");
    nar.why(_("the first words are read off c while the decoder's state is still c itself; every later word also depends "
            "on the decoder carrying its place through its own steps and guesses. How much of the later loss is c "
            "forgetting and how much is the decoder's own wrong guesses (the shifts above among them), this table "
            "does not separate."));

    export_results(nar, {{"no_attention", b.eval}}, corpus.test);
    nar.step(_("What the attention chapters change"), "c  →  c_i = Σ_j α_ij h_j");
    nar.say(_("chapter 01 keeps every h_j and lets each decoder step choose its own mixture of them: α_ij ≥ 0, "
              "summing to 1 over j, says how much step i reads word j."));
    nar.say(_("word 1 reaches c through S − 1 GRU steps, one after another; chapter 03 measures this path length "
              "against attention's single layer (Vaswani et al. 2017, Table 1)."));
    nar.takeaway(ch00_takeaway(b, c.size()));
  });
}
